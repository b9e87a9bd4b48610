"""The hook's arguments (`--agent NAME`, `--event NAME`) and its fast path for every agent:
stdlib only, nothing printed, exit 0, whatever the agent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ways_sensors.hook import parse_args

from ..conftest import LAUNCHER
from ..helpers import FORBIDDEN, dispatcher_lock, entries, modules_on_path
from .fixtures import CODEX, COPILOT, CURSOR, GEMINI, everything, load

TOOL_CALLS = {
    "codex": (CODEX, "PreToolUse"),
    "gemini": (GEMINI, "BeforeTool"),
    "cursor": (CURSOR, "preToolUse"),
    "copilot": (COPILOT, "PreToolUse"),
}


@pytest.mark.parametrize(
    "args, parsed",
    [
        ([], {}),
        (["--agent", "codex"], {"agent": "codex"}),
        (["--agent=codex"], {"agent": "codex"}),
        (
            ["--event", "preToolUse", "--agent", "copilot"],
            {"event": "preToolUse", "agent": "copilot"},
        ),
        (
            ["--agent=copilot", "--event=subagentStart"],
            {"agent": "copilot", "event": "subagentStart"},
        ),
        (["--agent"], None),
        (["--agent", "a", "--agent", "b"], None),
        (["--event"], None),
        (["--bogus", "x"], None),
        (["codex"], None),
    ],
)
def test_arguments(args, parsed):
    assert parse_args(args) == parsed


def modules(install, tmp_path, agent: str, data: bytes) -> set[str]:
    return modules_on_path(install, tmp_path, data, ("--agent", agent))


@pytest.mark.parametrize("agent", list(TOOL_CALLS))
def test_every_agent_s_fast_path_imports_only_the_standard_library(install, tmp_path, agent):
    folder, event = TOOL_CALLS[agent]
    fx = load(folder)
    data = json.dumps(fx.payloads(event)[0]).encode()
    quiet = modules(install, tmp_path, agent, data)  # no rule selects
    assert not (FORBIDDEN & quiet), FORBIDDEN & quiet
    assert "os" not in quiet
    install.sensor("all", everything(tmp_path / "o.jsonl"))
    with dispatcher_lock(install, fx.session_id):
        busy = modules(install, tmp_path, agent, data)  # the hand-off
        [entry] = entries(install, fx.session_id)
    assert not (FORBIDDEN & busy), FORBIDDEN & busy
    assert entry.agent == agent
    loaded = {m for m in busy | quiet if m.startswith("ways_sensors.agents")}
    assert loaded == set()  # the faces are in index.py: no registry, no adapter package


def test_gemini_s_precompress_spools_the_chat_file_s_size(install, tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(b"x" * 1234 + b"\n")
    install.sensor("all", everything(tmp_path / "o.jsonl"))
    pre = {"session_id": "g1", "transcript_path": str(chat), "hook_event_name": "PreCompress",
           "trigger": "auto", "timestamp": "2026-11-30T00:00:00.000Z"}  # fmt: skip
    tool = {**pre, "hook_event_name": "BeforeTool", "tool_name": "x", "tool_input": {}}
    with dispatcher_lock(install, "g1"):
        for body in (pre, tool):
            r = subprocess.run(
                [sys.executable, "-S", str(LAUNCHER), "hook", "sensors", "--agent", "gemini"],
                input=json.dumps(body).encode(),
                capture_output=True,
                env=install.env,
            )
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        got = entries(install, "g1")
    assert [(e.event, e.transcript_size) for e in got] == [
        ("PreCompress", 1235),
        ("BeforeTool", -1),
    ]
