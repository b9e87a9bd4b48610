"""What stays at rest (issue 22's done-when, docs/privacy.md "What stays at rest"): a
content canary in every field of every agent's events, and in their session files, never
appears in a state file outside the session's spool and journal.

Each of the five agents' recorded or documented sessions (tests/fixtures) is played
through the wired hook (a subprocess, JSON on stdin) with the canary written into
every string the agent sends, then the real dispatcher delivers it to a file consumer
outside the state root. The state root is walked twice: while the session is open
(its build cursor, cursors, counters, previews...) and after it ended and its folder
went (the ledger keeps what a resumed session needs). Only the spool and the journal
may hold the canary (they hold what the session said until it is delivered); the
consumer's file must hold it (the canary really flowed).

Not canaried: what routes an event and what names things, which stay at rest (ids of
the session, call, turn and agent; the event's name; paths; the names of the model, the
tool, the permission mode, the agent type, a compaction's trigger, a session start's
source, a call's status: `fields: metadata` keeps the same names).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .agents.fixtures import CODEX, COPILOT, CURSOR, GEMINI, dispatch, load, run_hook
from .conftest import ALL_SECTIONS, HOOKS, TRANSCRIPT
from .helpers import dispatcher_lock
from .planting import planted

CANARY = "CANARY-5e1b9d"


def canaried(value: Any, key: str = "") -> Any:
    """`value` with the canary in every string a key outside KEEP holds."""
    return planted(value, CANARY, key)


def canaried_lines(data: bytes) -> tuple[bytes, list[int]]:
    """A JSONL session file with the canary in it, and where each line ended."""
    out, ends = b"", []
    for line in data.split(b"\n"):
        if line.strip():
            try:
                line = json.dumps(canaried(json.loads(line))).encode()
            except ValueError:
                pass
        out += line + b"\n"
        ends.append(len(out))
    return out, ends


def sensor(out: Path) -> str:
    return (
        "rules:\n  all:\n"
        f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
        "    redact: none\n    delivery: at_least_once\n    chain: true\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


def events_of(agent: str) -> tuple[str, list[tuple[dict, int]], bytes, bool]:
    """(session id, [(payload, session file size or -1)], session file, argv event)."""
    if agent == "claude-code":
        payloads = [json.loads(x) for x in HOOKS.read_text().splitlines() if x.strip()]
        return (
            payloads[0]["session_id"],
            [(p, -1) for p in payloads],
            TRANSCRIPT.read_bytes(),
            False,
        )
    folder = {"codex": CODEX, "gemini": GEMINI, "cursor": CURSOR, "copilot": COPILOT}[agent]
    fx = load(folder)
    return (
        fx.session_id,
        [(x["payload"], x["size"]) for x in fx.lines],
        fx.session_bytes,
        (agent == "copilot"),
    )


def holding(root: Path, allowed: list[Path]) -> list[str]:
    """Every file under `root` holding the canary, but those under `allowed`."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if any(path.is_relative_to(a) for a in allowed) or not path.is_file():
                continue
            if CANARY.encode() in path.read_bytes() or CANARY in name:
                found.append(str(path.relative_to(root)))
    return sorted(found)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "cursor", "copilot"])
def test_a_content_canary_is_at_rest_only_in_the_spool_and_journal(install, tmp_path, agent):
    out = tmp_path / "consumer" / "out.jsonl"
    install.sensor("all", sensor(out))
    sid, events, session_file, argv_event = events_of(agent)
    data, ends = canaried_lines(session_file)
    path = install.root / "agent-home" / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    original_ends = [i + 1 for i, c in enumerate(session_file) if c == ord("\n")]
    end_events = {"SessionEnd", "sessionEnd"}
    last_open = max(
        i for i, (p, _) in enumerate(events) if p.get("hook_event_name") not in end_events
    )
    session = install.state_root / "sessions" / sid
    allowed = [session / "spool", session / "journal"]

    def play(part: list[tuple[dict, int]]) -> None:
        with dispatcher_lock(install, sid):
            for p, size in part:
                lines = sum(1 for e in original_ends if e <= size) if size >= 0 else len(ends)
                path.write_bytes(data[: ends[lines - 1]] if lines else b"")
                p = canaried(p)
                for key in ("transcript_path", "transcriptPath"):
                    if p.get(key):
                        p[key] = str(path)
                event = p.get("hook_event_name") if argv_event else None
                run_hook(install, agent, p, event)
        path.write_bytes(data)
        dispatch(install, sid)

    play(events[: last_open + 1])  # the session open: its build cursor, its cursors
    assert CANARY in out.read_text()  # the canary flowed to the consumer
    assert holding(install.state_root, allowed) == [], "open"
    play(events[last_open + 1 :])  # ended: the folder goes, the ledger stays
    assert holding(install.state_root, allowed) == [], "ended"
    assert holding(install.root / "cache", []) == []
