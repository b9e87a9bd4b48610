"""Codex, Gemini CLI, Cursor and Copilot CLI: a rule's records are the same whatever
other rules are enabled (issue 21; tests/test_independent.py does it for Claude Code).

The hook spools an event only when some rule selects a section the event can yield.
Before, a Gemini CLI, Cursor or Copilot CLI result selected alone lost its call's id
(the prompt that names the turn's ids and the call a result pairs with were not
spooled), and a Gemini CLI compaction's `after` record took the time of whichever
later event read the chat file. Each agent's recorded session goes through the wired
hook (each event at a fixed instant, faketime) and the real dispatcher twice: rule `r`
alone, then beside a rule selecting every other section."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Install, kill_dispatchers
from ..helpers import dispatcher_lock
from .fixtures import CODEX, COPILOT, CURSOR, GEMINI, dispatch, hook_argv, load, records

R = ["tool_result", "compaction"]
OTHERS = ["user_prompt", "assistant_response", "tool_call", "subagent", "session_start",
          "session_end"]  # fmt: skip
# identity: each run makes its state root anew, and with it an install id (fleet/identity.py)
VARYING = ("seq", "rule", "rule_seq", "chain", "identity")
CASES = {"codex": CODEX, "gemini": GEMINI, "cursor": CURSOR, "copilot": COPILOT}


def play(install: Install, agent: str, folder: Path) -> None:
    """The fixture's events through the wired hook, its session file as it stood at each
    event, each hook at 12:00:00 + i s (UTC); then the real dispatcher."""
    fx = load(folder)
    data = fx.session_bytes
    path = install.root / "agent-home" / (fx.meta.get("session_file") or "session.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    base = datetime.datetime(2026, 11, 30, 12, 0)
    with dispatcher_lock(install, fx.session_id):
        for i, line in enumerate(fx.lines):
            payload = dict(line["payload"])
            if line["size"] >= 0:
                path.write_bytes(data[: line["size"]])
            for key in ("transcript_path", "transcriptPath"):
                if payload.get(key):
                    payload[key] = str(path)
            at = (base + datetime.timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S")
            r = subprocess.run(
                ["faketime", "-f", at, *hook_argv(agent)], input=json.dumps(payload).encode(),
                capture_output=True, env={**install.env, "TZ": "UTC"}, cwd=install.project,
                timeout=60,
            )  # fmt: skip
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    if data:
        path.write_bytes(data)
    dispatch(install, fx.session_id)


KEY = bytes(range(32))  # one redaction key for both runs: masked tokens are the same


def records_of(tmp_path: Path, agent: str, others: bool) -> list[dict]:
    root = tmp_path / "run"  # the same folders each run (paths are in the records)
    install = Install(root)
    install.state_root.mkdir(parents=True, mode=0o700)
    (root / "state").chmod(0o700)
    key = install.state_root / "redaction.key"
    key.write_bytes(KEY)
    key.chmod(0o600)
    rule = "rules:\n  r:\n    sections: [{}]\n    dispatch: {{file: {{path: '{}'}}}}\n"
    install.sensor("s", rule.format(", ".join(R), root / "r.jsonl"))
    if others:
        install.sensor("o", rule.format(", ".join(OTHERS), root / "o.jsonl"))
    try:
        play(install, agent, CASES[agent])
        return records(root / "r.jsonl")
    finally:
        kill_dispatchers(root)
        shutil.rmtree(root)


def strip(rec: dict) -> str:
    return json.dumps({k: v for k, v in rec.items() if k not in VARYING})


@pytest.mark.parametrize("agent", sorted(CASES))
def test_a_rules_records_do_not_depend_on_other_rules(tmp_path, agent):
    assert shutil.which("faketime"), "faketime is missing: scripts/setup.sh installs it"
    alone = records_of(tmp_path, agent, False)
    beside = records_of(tmp_path, agent, True)
    assert [r["section"] for r in alone].count("tool_result") >= 2
    a, b = [strip(r) for r in alone], [strip(r) for r in beside]
    diff = next(((x, y) for x, y in zip(a, b, strict=False) if x != y), None)
    assert a == b, diff or (len(a), len(b))
    ids = [r["data"]["tool_use_id"] for r in alone if r["section"] == "tool_result"]
    assert not [i for i in ids if i and i.endswith("-0-1")]  # a turn's name, never "0"
