"""The Cursor adapter, on a session written from Cursor's documented payload shapes
(tests/fixtures/cursor-docs/; Cursor cannot run here), through the real hook and
dispatcher: on its own entry, and arriving on Claude Code's entry, which Cursor runs
from Claude Code's settings."""

from __future__ import annotations

import json

import pytest

from ways_sensors.agents.cursor.adapter import new_builder

from ..conftest import Install, kill_dispatchers, payload
from .fixtures import CURSOR, FAKE_TOKEN, THINKING, dispatch, everything, load, of, records, replay

FX = load(CURSOR)


def run(root, agent: str) -> list[dict]:
    install = Install(root)
    out = root / "out.jsonl"
    install.sensor("all", everything(out))
    try:
        replay(install, FX, agent)
        dispatch(install, FX.session_id)
    finally:
        kill_dispatchers(root)
    return records(out)


@pytest.fixture(scope="module", params=["cursor", "claude-code"])
def recs(request, tmp_path_factory):
    """The session through `--agent cursor`, and through Claude Code's entry."""
    return run(tmp_path_factory.mktemp(request.param), request.param)


def test_every_record_is_cursor_s_whichever_entry_it_came_through(recs):
    assert recs and {r["agent"] for r in recs} == {"cursor"}
    assert {r["session_id"] for r in recs} == {FX.session_id}
    assert [r["section"] for r in recs][:2] == ["session_start", "user_prompt"]


def test_each_tool_call_once_though_the_generic_and_the_specific_event_fired(recs):
    calls = of(recs, "tool_call")
    assert [(c["data"]["tool_name"], c["data"]["tool_use_id"]) for c in calls] == [
        ("Shell", "toolu_cur_01"),
        ("Shell", "toolu_cur_02"),
        ("Read", "toolu_cur_03"),
        ("MCP:github:create_issue", "toolu_cur_04"),
    ]
    assert [c["data"]["tool_kind"] for c in calls] == ["shell", "shell", "read", "mcp"]
    assert calls[0]["data"]["command"] == "npm test"
    assert (calls[3]["data"]["mcp_server"], calls[3]["data"]["mcp_tool"]) == (
        "github",
        "create_issue",
    )
    assert calls[3]["data"]["input"] == {"title": "flaky test"}  # Cursor sends JSON text


def test_results_once_with_failures_marked(recs):
    results = [
        (r["data"]["tool_name"], r["data"]["status"], r["data"]["tool_use_id"])
        for r in of(recs, "tool_result")
    ]
    assert results[:4] == [
        ("Shell", "success", "toolu_cur_01"),
        ("Shell", "failure", "toolu_cur_02"),
        ("Read", "success", "toolu_cur_03"),
        ("MCP:github:create_issue", "success", "toolu_cur_04"),
    ]
    assert results[4][:2] == ("Edit", "success")  # afterFileEdit, in the second prompt
    assert len(results) == 5
    first = of(recs, "tool_result")[0]["data"]
    assert first["output"] == "12 passed\n"  # afterShellExecution came before postToolUse
    failed = of(recs, "tool_result")[1]["data"]
    assert failed["error"] == "Command failed with exit code 128"


def test_prompts_replies_compaction_no_thinking_secret_masked(recs):
    assert [r["data"]["prompt"] for r in of(recs, "user_prompt")] == [
        "Run the tests and push",
        "Fix the README",
    ]
    assert [r["data"]["text"] for r in of(recs, "assistant_response")] == [
        "Tests pass; the push was refused.",
        "Done.",
    ]
    assert [r["prompt_id"] for r in of(recs, "user_prompt")] == ["gen-0b1c2d3e", "gen-4f5a6b7c"]
    [c] = of(recs, "compaction")
    assert (c["data"]["phase"], c["data"]["trigger"]) == ("before", "manual")
    text = json.dumps(recs)
    assert THINKING not in text and FAKE_TOKEN not in text
    assert of(recs, "session_end")[0]["data"]["reason"] == "completed"


def test_a_claude_code_payload_on_claude_code_s_entry_stays_claude_code_s(install, tmp_path):
    out = tmp_path / "o.jsonl"
    install.sensor("all", everything(out))
    tool_input = {"command": "cat notes", "note": {"cursor_version": "x", "conversation_id": "y"}}
    body = {**payload("PreToolUse"), "tool_input": tool_input}
    r = install.hook(body)  # a nested look-alike of Cursor's keys is not Cursor
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    from ..helpers import wait_until

    assert wait_until(lambda: records(out))
    assert [x["agent"] for x in records(out)] == ["claude-code"]


def test_the_specific_event_alone_is_recorded_when_the_generic_one_is_not_hooked():
    b = new_builder()
    shell = {k: v for k, v in FX.payloads("beforeShellExecution")[0].items()}
    [d] = b.build("beforeShellExecution", shell, 1)
    assert (d.data["tool_name"], d.data["command"], d.data["tool_kind"]) == (
        "Shell",
        "npm test",
        "shell",
    )
    after = FX.payloads("afterShellExecution")[0]
    [r] = b.build("afterShellExecution", after, 2)
    assert r.data["tool_use_id"] == d.data["tool_use_id"] and r.data["output"] == "12 passed\n"
    # the same command run again in the same prompt is a new call, recorded again
    assert len(b.build("beforeShellExecution", shell, 3)) == 1


def test_thinking_and_stop_make_no_record():
    b = new_builder()
    for event in ("afterAgentThought", "stop", "beforeTabFileRead", "afterTabFileEdit"):
        body = {"hook_event_name": event, "conversation_id": "c", "text": THINKING}
        assert b.build(event, body, 1) == []
