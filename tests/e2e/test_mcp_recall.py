"""The real Claude Code recalls an earlier session through `ways mcp` (issue 38): a first
session runs a command carrying a fake token, stored masked by the shipped store
sensor; a second, new session's scripted model calls the MCP tool `search_history` and
the answer it receives (the tool result ways recorded) holds that command, masked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from . import harness
from .messages_api import FAKE_TOKEN

pytestmark = pytest.mark.slow


def test_claude_code_finds_a_command_of_an_earlier_session(tmp_path):
    s = harness.prepare(tmp_path)
    assert s.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
    harness.run(s, ["first [secret] push it"])
    first = s.session_id
    config = tmp_path / "mcp.json"
    ways = str(Path(sys.executable).parent / "ways")
    server = {"type": "stdio", "command": ways, "args": ["mcp"], "env": s.env}
    config.write_text(json.dumps({"mcpServers": {"ways": server}}))
    s.session_id = None  # a new session
    args = ("--mcp-config", str(config), "--strict-mcp-config")
    allow = ("--allowedTools", "mcp__ways__search_history")
    harness.run(s, ["[recall] what did I push?"], args=(*args, *allow))
    assert s.session_id and s.session_id != first
    records = s.records()
    [result] = [
        r
        for r in records
        if r["section"] == "tool_result" and r["data"]["tool_name"] == "mcp__ways__search_history"
    ]
    assert result["data"]["status"] == "success", result
    answer = json.dumps(result["data"]["output"])
    assert "git push https://x:[REDACTED:github-token:" in answer.replace("\\\\", "\\")
    assert first in answer and FAKE_TOKEN not in answer
