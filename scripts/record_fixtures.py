"""Re-record the test fixtures in tests/fixtures/claude-code-<version>/ from the real client.

    .venv/bin/python scripts/record_fixtures.py [--keep DIR] [--permission]

Runs one session of the real Claude Code client (the version pinned in tests/e2e/harness.py,
installed with npm on first use, or $CLAUDE_BIN) against the scripted Messages API on
loopback (tests/e2e/messages_api.py), in a throwaway HOME wired by `ways reconcile` plus a
raw recorder that keeps every hook payload exactly as the client sent it. Nothing leaves
the machine. The session is one client process (tests/e2e/conversation.py), as a person
would use it:

1. a plain turn: thinking, text and one Bash call
2. a Bash call that fails (PostToolUseFailure)
3. a background subagent that runs one Bash call (SubagentStart, the subagent's own
   PreToolUse/PostToolUse, SubagentStop), then the task notification's turn
4. a slow Bash call, and a message typed while it runs (absorbed into the turn)
5. a reply interrupted by the user (the client's own interrupt: no Stop)
6. `/compact` with instructions (PreCompact, Claude Code's internal agents, SessionStart
   with source `compact`)
7. a plain turn after the compaction, then the client is closed (SessionEnd)

It replaces the folder's contents with: `hooks.jsonl` (every payload, in order),
`payloads/<Event>[-variant].json` (one real payload per wired event and variant) and
`transcript/<session>.jsonl` with `transcript/<session>/subagents/` as the client wrote
them. The throwaway paths are rewritten to a realistic home (/home/dev, the project at
/home/dev/project, this repository at /home/dev/ways-sensors, the recorder's folder at
/home/dev/recording) so a re-recording differs only where the client did
(tests/fixtures/README.md says what each file is). It fails, writing nothing, if the
session lacks a wanted payload or the interrupted reply. `--keep DIR` records in DIR
and leaves it there for reading.

`--permission` records the same session with a permission prompt too (after step 4, a
Write outside the project and the allow list: the client asks on stdio, the recorder
answers yes) into `tests/fixtures/claude-code-<version>-permission/` (`hooks.jsonl` and
`transcript/` only).

After re-recording, run the suite: tests derive their expectations from these files,
but a changed client can change what the transcript holds.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e import harness, messages_api  # noqa: E402
from tests.e2e.conversation import Conversation  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / f"claude-code-{harness.VERSION}"
PERMISSION = FIXTURES.parent / f"claude-code-{harness.VERSION}-permission"  # --permission
HOME = "/home/dev"
INTERRUPTED = "[Request interrupted by user]"

Payload = dict[str, Any]


def _main(t: Payload) -> bool:
    return not t.get("agent_id")


def _is(event: str, want: Callable[[Payload], bool] = lambda t: True) -> Callable[[Payload], bool]:
    return lambda t: t.get("hook_event_name") == event and want(t)


# file name -> which recorded payload it is (the first that matches)
WANTED: dict[str, Callable[[Payload], bool]] = {
    "SessionStart": _is("SessionStart", lambda t: t.get("source") == "startup"),
    "UserPromptSubmit": _is("UserPromptSubmit"),
    "PreToolUse": _is("PreToolUse", lambda t: _main(t) and t.get("tool_name") == "Bash"),
    "PostToolUse": _is("PostToolUse", lambda t: _main(t) and t.get("tool_name") == "Bash"),
    "PostToolUseFailure": _is("PostToolUseFailure"),
    "Stop": _is("Stop"),
    "SubagentStart": _is("SubagentStart"),
    "PreToolUse-in-subagent": _is("PreToolUse", lambda t: bool(t.get("agent_type"))),
    "PostToolUse-in-subagent": _is("PostToolUse", lambda t: bool(t.get("agent_type"))),
    "SubagentStop": _is("SubagentStop", lambda t: bool(t.get("agent_type"))),
    "SubagentStop-internal": _is("SubagentStop", lambda t: t.get("agent_type") == ""),
    "PreCompact": _is("PreCompact"),
    "SessionStart-compact": _is("SessionStart", lambda t: t.get("source") == "compact"),
    "SessionEnd": _is("SessionEnd"),
}


def play(s: harness.Session, permission: bool = False) -> None:
    """The scripted session (see the module docstring); `permission`: a Write outside
    the project and the allow list too, after the typed message (PermissionRequest)."""
    c = Conversation(s, ask=permission)
    try:
        c.say("Run the tests, please.")
        c.say("[fail] Run the integration check.")
        c.say("[sub] Delegate the search for the sender to a subagent.")
        c.until_sent(_is("SubagentStop", lambda t: bool(t.get("agent_type"))))
        c.result()  # the task notification becomes a turn of its own
        c.prompt("[wait] Run the slow command.")
        c.until_sent(_is("PreToolUse", lambda t: str(t.get("tool_input")).find("sleep") > 0))
        c.prompt("also check the logs")  # typed while the command runs
        c.result()
        if permission:
            outside = s.root / "outside"
            outside.mkdir(exist_ok=True)
            messages_api.WRITE_DIR = str(outside)
            c.say("[write] Keep the notes outside the project.")
        c.interrupt_reply("[cut] Explain the retry design.")
        c.say("/compact keep the retry decisions")
        c.say("Run the tests once more.")
    finally:
        code = c.close()
    if code != 0:
        raise RuntimeError(f"claude exited with {code}; see {s.root}/client.stderr")


def _encoded(path: str) -> str:
    """Claude Code's folder name for a project path (projects/, /tmp/claude-<uid>/)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def rewrites(s: harness.Session) -> list[tuple[str, str]]:
    """Throwaway paths to realistic ones, longest first."""
    pairs = {
        str(s.project): f"{HOME}/project",
        _encoded(str(s.project)): _encoded(f"{HOME}/project"),
        str(s.home): HOME,
        sys.executable: f"{HOME}/ways-sensors/.venv/bin/python",
        str(REPO): f"{HOME}/ways-sensors",
        str(s.root): f"{HOME}/recording",  # the raw recorder's file, named in hook output
    }
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def clean(data: bytes, pairs: list[tuple[str, str]]) -> bytes:
    for old, new in pairs:
        data = data.replace(old.encode(), new.encode())
    return data


def collect(s: harness.Session) -> dict[str, bytes]:
    """Relative path -> bytes of every fixture file, before rewriting."""
    raw = [line for line in s.truth_path.read_bytes().splitlines() if line.strip()]
    sent = [json.loads(line) for line in raw]
    files = {"hooks.jsonl": b"".join(line + b"\n" for line in raw)}
    missing = []
    for name, want in WANTED.items():
        i = next((i for i, t in enumerate(sent) if want(t)), None)
        if i is None:
            missing.append(name)
        else:
            files[f"payloads/{name}.json"] = raw[i]
    if missing:
        raise RuntimeError(f"the session sent no payload for: {', '.join(missing)}")
    transcript = s.transcript()
    if INTERRUPTED not in transcript.read_text():
        raise RuntimeError("the transcript holds no interrupted reply")
    files[f"transcript/{transcript.name}"] = transcript.read_bytes()
    own = transcript.parent / transcript.stem
    for p in sorted(own.rglob("*")) if own.is_dir() else []:
        if p.is_file():
            files[f"transcript/{p.relative_to(transcript.parent)}"] = p.read_bytes()
    return files


def session_files(s: harness.Session) -> dict[str, bytes]:
    """The --permission session: every payload and the transcripts, nothing picked."""
    sent = [json.loads(x) for x in s.truth_path.read_bytes().splitlines() if x.strip()]
    for event in ("PermissionRequest", "SubagentStart", "UserPromptSubmit", "PreCompact"):
        if not any(t.get("hook_event_name") == event for t in sent):
            raise RuntimeError(f"the session sent no {event}")
    files = {k: v for k, v in collect(s).items() if not k.startswith("payloads/")}
    return files


def write(files: dict[str, bytes], pairs: list[tuple[str, str]], to: Path = FIXTURES) -> None:
    if to.exists():
        shutil.rmtree(to)
    for rel, data in files.items():
        path = to / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(clean(data, pairs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="record in this folder and leave it")
    ap.add_argument(
        "--permission",
        action="store_true",
        help=f"the session with a permission prompt too, into {PERMISSION.relative_to(REPO)}",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ways-record-") as tmp:
        root = args.keep.resolve() if args.keep else Path(tmp)
        s = harness.prepare(root)
        play(s, args.permission)
        harness.wait_for_dispatchers(s)
        if args.permission:
            write(session_files(s), rewrites(s), PERMISSION)
        else:
            write(collect(s), rewrites(s))
    folder = PERMISSION if args.permission else FIXTURES
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
