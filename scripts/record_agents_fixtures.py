"""Re-record the Gemini CLI and Codex CLI fixtures from the real clients.

    .venv/bin/python scripts/record_agents_fixtures.py [gemini] [codex] [codex-subagent]

Runs the end-to-end harness (tests/e2e/agents_harness.py: the pinned client from npm,
our scripted model API on loopback, `ways reconcile --agent ...` in a throwaway HOME,
the ground-truth recorder beside our hook) through its four prompts, then writes

    tests/fixtures/gemini-cli-<version>/   hooks.jsonl, chat.jsonl, fixture.json
    tests/fixtures/codex-<version>/        hooks.jsonl, rollout.jsonl, fixture.json

`codex-subagent` records one Codex turn that spawns a subagent (Codex's `multi_agent`
feature) whose command fails, into tests/fixtures/codex-<version>-subagent/: the
session's rollout.jsonl and the subagent's own subagent-rollout.jsonl (each event's
`size` is that of the file its payload names; fixture.json's `session_files` maps the
recorded paths to them).

hooks.jsonl holds the recorder's lines in order, `{"payload", "size", "event"}`:
what the client sent on each hook event and how many bytes its session file (chat.jsonl
/ rollout.jsonl) held then, so a test can replay the session with the file as it stood.
Paths are rewritten: the throwaway HOME becomes /home/dev, the project /home/dev/shop
(and Gemini CLI's projectHash, the sha256 of the project path, follows); sizes are
recomputed for the rewritten bytes. The fake token of the `[secret]` prompt is kept:
the tests check it is masked.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e import agents_harness as harness  # noqa: E402

HOME, PROJECT = "/home/dev", "/home/dev/shop"


def rewriter(s: harness.Session):
    project = str(s.project.resolve())
    pairs = [
        (project, PROJECT),
        (
            hashlib.sha256(project.encode()).hexdigest(),
            hashlib.sha256(PROJECT.encode()).hexdigest(),
        ),
        (str(s.home.resolve()), HOME),
        (str(s.root.resolve()), HOME + "/.e2e"),
    ]

    def rewrite(data: bytes) -> bytes:
        for old, new in pairs:
            data = data.replace(old.encode(), new.encode())
        return data

    return rewrite


def save(s: harness.Session, folder: Path, session_name: str, client: str, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rewrite = rewriter(s)
    original = s.session_file().read_bytes()
    (folder / session_name).write_bytes(rewrite(original))
    lines = []
    main = str(s.session_file())
    for t in s.truth_lines():
        size = t["size"]
        if isinstance(t["payload"], dict) and t["payload"].get("transcript_path") != main:
            size = -1  # another file (a Gemini resume's short one): not the fixture's
        if size >= 0:
            size = len(rewrite(original[:size]))
        payload = json.loads(rewrite(json.dumps(t["payload"]).encode()))
        lines.append(json.dumps({"payload": payload, "size": size, "event": t["event"]}))
    (folder / "hooks.jsonl").write_text("\n".join(lines) + "\n")
    meta = {
        "client": client,
        "version": version,
        "prompts": harness.PROMPTS,
        "session_id": s.session_id,
        "session_file": session_name,
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "by": "scripts/record_agents_fixtures.py",
    }
    (folder / "fixture.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{folder}: {len(lines)} hook events, {session_name} {len(original)} bytes")


SUBAGENT_PROMPTS = ["[sub] delegate the check"]


def save_subagent(s: harness.Session, folder: Path) -> None:
    """The Codex session with a subagent: two rollouts (the session's and the
    subagent's own thread's), each event's `size` that of the file its payload names."""
    folder.mkdir(parents=True, exist_ok=True)
    rewrite = rewriter(s)
    names: dict[str, str] = {str(s.session_file()): "rollout.jsonl"}
    for t in s.truth_lines():
        path = t["payload"].get("transcript_path") if isinstance(t["payload"], dict) else None
        if isinstance(path, str) and path not in names:
            names[path] = "subagent-rollout.jsonl"
    if len(names) != 2:
        raise RuntimeError(f"expected the session's rollout and a subagent's, got {names}")
    files = {path: Path(path).read_bytes() for path in names}
    for path, name in names.items():
        (folder / name).write_bytes(rewrite(files[path]))
    lines = []
    for t in s.truth_lines():
        path = t["payload"].get("transcript_path")
        size = len(rewrite(files[path][: t["size"]])) if t["size"] >= 0 else -1
        payload = json.loads(rewrite(json.dumps(t["payload"]).encode()))
        lines.append(json.dumps({"payload": payload, "size": size, "event": t["event"]}))
    (folder / "hooks.jsonl").write_text("\n".join(lines) + "\n")
    meta = {
        "client": "@openai/codex",
        "version": harness.CODEX_VERSION,
        "prompts": SUBAGENT_PROMPTS,
        "session_id": s.session_id,
        "session_files": {rewrite(p.encode()).decode(): n for p, n in names.items()},
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "by": "scripts/record_agents_fixtures.py codex-subagent",
    }
    (folder / "fixture.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{folder}: {len(lines)} hook events, {len(names)} rollouts")


def main(argv: list[str]) -> int:
    which = argv or ["gemini", "codex"]
    fixtures = REPO / "tests" / "fixtures"
    for agent in which:
        with tempfile.TemporaryDirectory(prefix=f"record-{agent}-") as tmp:
            s = harness.prepare(Path(tmp), agent.split("-")[0])
            if agent == "codex-subagent":
                harness.run_codex(s, SUBAGENT_PROMPTS, agents=True)
                save_subagent(s, fixtures / f"codex-{harness.CODEX_VERSION}-subagent")
            elif agent == "gemini":
                harness.run_gemini(s)
                folder = fixtures / f"gemini-cli-{harness.GEMINI_VERSION}"
                save(s, folder, "chat.jsonl", "@google/gemini-cli", harness.GEMINI_VERSION)
            else:
                harness.run_codex(s)
                folder = fixtures / f"codex-{harness.CODEX_VERSION}"
                save(s, folder, "rollout.jsonl", "@openai/codex", harness.CODEX_VERSION)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
