"""One vocabulary across agents: a rule with `where: {data.tool_kind: shell}` receives the
shell commands of Claude Code, Codex, Gemini CLI (their real payloads), Cursor and
Copilot CLI (their documented ones) alike, at `data.command`, through the real hook and
dispatcher."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from ways_sensors.agents import tool_kinds
from ways_sensors.agents.codex.builder import TOOL_KINDS as CODEX
from ways_sensors.agents.copilot.builder import TOOL_KINDS as COPILOT
from ways_sensors.agents.cursor.builder import TOOL_KINDS as CURSOR
from ways_sensors.agents.gemini.builder import TOOL_KINDS as GEMINI

from ..conftest import payload
from ..helpers import dispatcher_lock
from .fixtures import CODEX as CODEX_FX
from .fixtures import COPILOT as COPILOT_FX
from .fixtures import CURSOR as CURSOR_FX
from .fixtures import FAKE_TOKEN, dispatch, load, records, run_hook
from .fixtures import GEMINI as GEMINI_FX

SHELL_RULE = """\
rules:
  shell:
    sections: [tool_call]
    where: {{data.tool_kind: shell}}
    dispatch: {{file: {{path: '{out}'}}}}
    delivery: at_least_once
"""


SHELL_TOOLS = ("Bash", "run_shell_command", "Shell", "bash")


def test_one_rule_receives_every_agent_s_shell_commands(install, tmp_path):
    out = tmp_path / "shell.jsonl"
    install.sensor("every-shell", SHELL_RULE.format(out=out))
    claude = {**payload("PreToolUse"), "tool_input": {"command": "make test"}}
    sessions = [("claude-code", claude["session_id"], [claude])]
    for folder, agent, event in (
        (CODEX_FX, "codex", "PreToolUse"),
        (GEMINI_FX, "gemini", "BeforeTool"),
        (CURSOR_FX, "cursor", "preToolUse"),
        (COPILOT_FX, "copilot", "PreToolUse"),
    ):
        fx = load(folder)
        sessions.append((agent, fx.session_id, fx.payloads(event)))
    with ExitStack() as locks:  # the spools stay as the hook left them
        for _, sid, _ in sessions:
            locks.enter_context(dispatcher_lock(install, sid))
        for agent, _, calls in sessions:
            for p in calls:
                run_hook(install, agent, p)
    for _, sid, _ in sessions:
        dispatch(install, sid)
    got = records(out)
    for agent, sid, calls in sessions:
        shell = [p["tool_input"]["command"] for p in calls if p["tool_name"] in SHELL_TOOLS]
        mine = [r for r in got if r["session_id"] == sid]
        assert {r["agent"] for r in mine} == {agent}
        assert {r["data"]["tool_kind"] for r in mine} == {"shell"}
        want = [c for c in shell if FAKE_TOKEN not in c]
        assert [
            r["data"]["command"] for r in mine if "REDACTED" not in r["data"]["command"]
        ] == want
        assert len(mine) == len(shell)
    # not shell: Cursor's Read and MCP calls, Copilot CLI's view never reached the rule
    assert {r["data"]["tool_name"] for r in got} == set(SHELL_TOOLS)


@pytest.mark.parametrize("table", [tool_kinds.CLAUDE_CODE, CODEX, GEMINI, CURSOR, COPILOT])
def test_every_table_speaks_the_vocabulary(table):
    assert set(table.values()) <= set(tool_kinds.KINDS)
    assert "shell" in table.values()


@pytest.mark.parametrize(
    "tool_input, command",
    [
        ({"command": "ls -la"}, "ls -la"),
        ({"cmd": "echo hi", "yield_time_ms": 10}, "echo hi"),
        ({"command": ["/bin/bash", "-lc", "make"]}, "make"),
        ({"command": ["git", "status"]}, "git status"),
        ("npm test", "npm test"),
        ({"command": ""}, None),
        ({"path": "x"}, None),
        (None, None),
    ],
)
def test_the_command_is_found_wherever_the_agent_put_it(tool_input, command):
    assert tool_kinds.shell_command(tool_input) == command
    described = tool_kinds.describe("Bash", tool_input, tool_kinds.CLAUDE_CODE)
    assert described.get("command") == command and described["tool_kind"] == "shell"


def test_mcp_tools_by_their_name_s_shape_for_every_agent():
    for name in ("mcp__github__create_issue", "MCP:github:create_issue"):
        assert tool_kinds.kind_of(name, {}) == "mcp"
    assert tool_kinds.kind_of("SomethingNew", tool_kinds.CLAUDE_CODE) == "other"
    assert tool_kinds.kind_of(None, tool_kinds.CLAUDE_CODE) == "other"
