"""The real Claude Code recalls an earlier session through `ways mcp` (issue 38): a first
session runs a command carrying a fake token, stored masked by the shipped store
sensor (its rule chained); a second, new session's scripted model calls the MCP tool
`search_history`, whose answer (the tool result ways recorded) holds that command,
masked, then `verify_record` for it, whose proof `ways sensors verify --key` accepts."""

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
    for key, value in (("enabled", "true"), ("rules.all.chain", "true")):
        assert s.ways("settings", "set", f"ways.sensors.store.{key}", value).returncode == 0
    harness.run(s, ["first [secret] push it"])
    first = s.session_id
    config = tmp_path / "mcp.json"
    ways = str(Path(sys.executable).parent / "ways")
    server = {"type": "stdio", "command": ways, "args": ["mcp"], "env": s.env}
    config.write_text(json.dumps({"mcpServers": {"ways": server}}))
    s.session_id = None  # a new session
    args = ("--mcp-config", str(config), "--strict-mcp-config")
    allow = ("--allowedTools", "mcp__ways__search_history", "mcp__ways__verify_record")
    harness.run(s, ["[recall] what did I push?"], args=(*args, *allow))
    assert s.session_id and s.session_id != first
    results = {
        r["data"]["tool_name"]: r["data"]
        for r in s.records()
        if r["section"] == "tool_result" and r["data"]["tool_name"].startswith("mcp__ways__")
    }
    search, verify = results["mcp__ways__search_history"], results["mcp__ways__verify_record"]
    assert search["status"] == verify["status"] == "success", results
    hits = json.loads(text_of(search["output"]))
    assert {h["session_id"] for h in hits} == {first}
    call = next(h for h in hits if h["section"] == "tool_call")
    assert "git push https://x:[REDACTED:github-token:" in call["snippet"]
    assert FAKE_TOKEN not in json.dumps(results)
    answer = json.loads(text_of(verify["output"]))  # the proof of the first hit
    assert (answer["record"]["session_id"], answer["record"]["seq"]) == (first, hits[0]["seq"])
    proof = tmp_path / "proof.jsonl"
    proof.write_text(answer["proof"])
    key = json.loads(s.ways("keys", "show", "--json").stdout)["verifier_key"]
    r = s.ways("sensors", "verify", str(proof), "--key", key)
    assert r.returncode == 0 and "intact" in r.stdout, r.stdout + r.stderr


def text_of(output) -> str:
    """An MCP tool's answer as Claude Code hands it to the PostToolUse hook: a string, or
    content blocks whose text is the answer."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and "content" in output:
        output = output["content"]
    return "".join(b.get("text", "") for b in output if isinstance(b, dict))
