"""Replaying the agents' fixtures (tests/fixtures/<agent>-<version>/) through the real hook.

A fixture's hooks.jsonl holds what the agent sent on each hook event, `{"payload",
"size", "event"}`, and its session file (a chat file or rollout) whole; `size` is how
many bytes of it existed when the hook ran. `replay` plays the events in order through
the wired hook command (a subprocess, JSON on stdin), writing the session file as it
stood at each event into the install, with the session's dispatch lock held (so the
spool keeps every entry); `dispatch` then runs the real dispatcher over the spool.
Recorded by scripts/record_agents_fixtures.py (Gemini CLI, Codex) or written from the
documented payload shapes (Cursor, Copilot CLI: cursor-docs/, copilot-docs/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..conftest import LAUNCHER, REPO
from ..helpers import dispatcher_lock

FIXTURES = REPO / "tests" / "fixtures"
GEMINI = FIXTURES / "gemini-cli-0.61.0"
CODEX = FIXTURES / "codex-0.169.0"
CURSOR = FIXTURES / "cursor-docs"
COPILOT = FIXTURES / "copilot-docs"
FAKE_TOKEN = "ghp_" + "Zq4v" * 9
THINKING = "THINKING-MARKER"


@dataclass
class Fixture:
    folder: Path
    lines: list[dict]
    meta: dict

    @property
    def session_bytes(self) -> bytes:
        name = self.meta.get("session_file")
        return (self.folder / name).read_bytes() if name else b""

    def payloads(self, event: str | None = None) -> list[dict]:
        out = [x["payload"] for x in self.lines]
        return [p for p in out if event is None or p.get("hook_event_name") == event]

    @property
    def session_id(self) -> str:
        p = self.lines[0]["payload"]
        return p.get("session_id") or p.get("conversation_id") or p.get("sessionId")


def load(folder: Path) -> Fixture:
    lines = [json.loads(x) for x in (folder / "hooks.jsonl").read_text().splitlines() if x]
    meta = json.loads((folder / "fixture.json").read_text())
    return Fixture(folder, lines, meta)


def hook_argv(agent: str, event: str | None = None) -> list[str]:
    """The hook exactly as `ways reconcile --agent` wires it (sh -c, the guard, -S)."""
    from ways_sensors.commands.reconcile import hook_command

    command = hook_command(sys.executable, str(LAUNCHER), agent=agent)
    if event:
        command += f" --event {event}"
    return ["sh", "-c", command]


def run_hook(install, agent: str, payload: dict, event: str | None = None):
    r = subprocess.run(
        hook_argv(agent, event),
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=install.env,
        cwd=install.project,
        timeout=60,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b""), r
    return r


def replay(install, fx: Fixture, agent: str, argv_event: bool = False) -> Path:
    """Every hook event of the fixture through the wired hook; returns where the session
    file was written (payloads name it instead of the recorded path)."""
    data = fx.session_bytes
    name = fx.meta.get("session_file") or "session.jsonl"
    path = install.root / "agent-home" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with dispatcher_lock(install, fx.session_id):
        for line in fx.lines:
            payload = dict(line["payload"])
            if line["size"] >= 0:
                path.write_bytes(data[: line["size"]])
            for key in ("transcript_path", "transcriptPath"):
                if payload.get(key):
                    payload[key] = str(path)
            run_hook(install, agent, payload, line["event"] if argv_event else None)
    if data:
        path.write_bytes(data)
    return path


def live_session(tmp_path_factory, fx: Fixture, agent: str) -> Iterator[tuple]:
    """The fixture's session through the real hook and dispatcher in an install of its
    own, for a module-scoped fixture: yields (install, the records a file consumer got,
    the session file written)."""
    from ..conftest import Install, kill_dispatchers

    root = tmp_path_factory.mktemp(agent)
    install = Install(root)
    out = root / "out.jsonl"
    install.sensor("all", everything(out))
    written = replay(install, fx, agent)
    dispatch(install, fx.session_id)
    yield install, records(out), written
    kill_dispatchers(root)


def dispatch(install, session_id: str) -> None:
    """The real dispatcher over the session's spool, until it is drained and idle."""
    r = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", session_id,
         "--idle", "0.5"],
        env=install.env,
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def everything(out: Path, **fields: str) -> str:
    """A sensor with one rule selecting every section an agent can yield, to `out`."""
    extra = "".join(f"    {k}: {v}\n" for k, v in fields.items())
    return (
        "rules:\n"
        "  all:\n"
        "    sections: [user_prompt, queued_message, assistant_response, tool_call,\n"
        "               tool_result, subagent, compaction, session_start, session_end]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
        "    delivery: at_least_once\n" + extra
    )


def of(recs: list[dict], section: str) -> list[dict]:
    return [r for r in recs if r["section"] == section]


def chat_turns(data: bytes) -> list[dict[str, list]]:
    """Each turn's model calls in a chat file, counted here independently of the builder:
    a turn starts at a prompt line (a user message that is neither a tool's response nor
    the context block); its calls are the gemini message lines after it, by id (a
    message is written again once its tool calls ran), [tokens, model]."""
    turns: list[dict[str, list]] = []
    for line in data.decode().splitlines():
        obj = json.loads(line)
        content = obj.get("content")
        prompt = isinstance(content, list) and not any(
            "functionResponse" in c or c.get("text", "").startswith("<session_context>")
            for c in content
        )
        if obj.get("type") == "user" and prompt:
            turns.append({})
        if obj.get("type") == "gemini" and "tokens" in obj:
            turns[-1][obj["id"]] = [obj["tokens"], obj["model"]]
    return turns
