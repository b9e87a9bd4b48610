"""Playing each agent's recorded or documented session (tests/fixtures) through the
wired hook and the real dispatcher, for the store's tests; `plant` rewrites what the
agent sends (a secret in every field, for the canary)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..agents.fixtures import CODEX, COPILOT, CURSOR, GEMINI, dispatch, load, run_hook
from ..conftest import HOOKS, TRANSCRIPT
from ..helpers import dispatcher_lock

AGENTS = ("claude-code", "codex", "gemini", "cursor", "copilot")
# secrets of three kinds the masking knows, planted in every field by the canaries
A36 = "Zq4vK8pL2mN6xR1tY5wB9cD3fG7hJ0sQaUe4"
SECRETS = {
    "github-token": "ghp_" + A36,
    "anthropic-api-key": "sk-ant-api03-" + A36 * 2 + "AA",
    "aws-access-key-id": "AKIA2E7A3F3BZZ4CQQ56",
}
PLANT = " ".join(SECRETS.values())


def leaks(blob: bytes) -> list[str]:
    """Which secrets `blob` holds, whole or by a distinctive part of them."""
    parts = {kind: (s, s[-20:]) for kind, s in SECRETS.items()}
    return [k for k, ps in parts.items() if any(p.encode() in blob for p in ps)]


Plant = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def _lines(data: bytes, plant: Plant) -> tuple[bytes, list[int]]:
    """A JSONL session file with `plant` applied to each line, and where each ended."""
    out, ends = b"", []
    for line in data.split(b"\n"):
        if line.strip():
            try:
                line = json.dumps(plant(json.loads(line))).encode()
            except ValueError:
                pass
        out += line + b"\n"
        ends.append(len(out))
    return out, ends


def play(install, agent: str, plant: Plant = _same) -> str:
    """The agent's session through the hook (the dispatcher held off, so the spool keeps
    every entry), then the real dispatcher until it is idle; the session's id."""
    if agent == "claude-code":
        payloads = [json.loads(x) for x in HOOKS.read_text().splitlines() if x.strip()]
        events = [(p, -1) for p in payloads]
        session_file, sid = TRANSCRIPT.read_bytes(), payloads[0]["session_id"]
    else:
        folder = {"codex": CODEX, "gemini": GEMINI, "cursor": CURSOR, "copilot": COPILOT}[agent]
        fx = load(folder)
        events = [(x["payload"], x["size"]) for x in fx.lines]
        session_file, sid = fx.session_bytes, fx.session_id
    data, ends = _lines(session_file, plant)
    original_ends = [i + 1 for i, c in enumerate(session_file) if c == ord("\n")]
    path = install.root / "agent-home" / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with dispatcher_lock(install, sid):
        for p, size in events:
            lines = sum(1 for e in original_ends if e <= size) if size >= 0 else len(ends)
            path.write_bytes(data[: ends[lines - 1]] if lines else b"")
            p = plant(p)
            for key in ("transcript_path", "transcriptPath"):
                if p.get(key):
                    p[key] = str(path)
            event = p.get("hook_event_name") if agent == "copilot" else None
            run_hook(install, agent, p, event)
    path.write_bytes(data)
    dispatch(install, sid)
    return sid
