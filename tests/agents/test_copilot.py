"""The Copilot CLI adapter, on a session written from its documented payloads
(tests/fixtures/copilot-docs/; Copilot CLI cannot run here), in both dialects: PascalCase
events that name themselves, camelCase ones whose event comes in argv (`--event`)."""

from __future__ import annotations

import json

import pytest

from ways_sensors.agents.copilot.adapter import new_builder

from ..conftest import Install, kill_dispatchers
from .fixtures import COPILOT, FAKE_TOKEN, dispatch, everything, load, of, records, replay, run_hook

FX = load(COPILOT)


@pytest.fixture(scope="module")
def recs(tmp_path_factory):
    root = tmp_path_factory.mktemp("copilot")
    install = Install(root)
    out = root / "out.jsonl"
    install.sensor("all", everything(out))
    try:
        replay(install, FX, "copilot", argv_event=True)
        dispatch(install, FX.session_id)
    finally:
        kill_dispatchers(root)
    return records(out)


def test_both_dialects_make_copilot_records_of_one_session(recs):
    assert recs and {r["agent"] for r in recs} == {"copilot"}
    assert {r["session_id"] for r in recs} == {FX.session_id}
    grep = [r for r in recs if r["data"].get("tool_name") == "grep"]  # the camelCase pair
    assert [r["hook_event"] for r in grep] == ["PreToolUse", "PostToolUse"]
    assert grep[0]["data"]["input"] == {"pattern": "TODO"}
    assert grep[1]["data"]["output"] == {
        "result_type": "success",
        "text_result_for_llm": "src/app.ts:3: TODO",
    }


def test_calls_paired_by_input_and_a_failure_reported_twice_recorded_once(recs):
    calls = {r["data"]["tool_use_id"]: r["data"] for r in of(recs, "tool_call")}
    results = of(recs, "tool_result")
    assert len(calls) == 4 and len(results) == 4
    for r in results:  # each result has its own call's id and input
        call = calls[r["data"]["tool_use_id"]]
        assert call["tool_name"] == r["data"]["tool_name"]
        assert call.get("command") == r["data"].get("command")
    status = [(r["data"]["tool_name"], r["data"]["status"]) for r in results]
    assert status == [("view", "success"), ("bash", "success"), ("bash", "failure"),
                      ("grep", "success")]  # fmt: skip
    failed = results[2]["data"]
    assert failed["error"] == "exit code 128: permission denied"
    kinds = [c["tool_kind"] for c in calls.values()]
    assert kinds == ["shell", "read", "shell", "search"]


def test_subagents_compaction_session_and_the_secret(recs):
    assert [(r["data"]["phase"], r["data"]["agent_type"]) for r in of(recs, "subagent")] == [
        ("start", "explore"),
        ("stop", "explore"),
    ]
    [c] = of(recs, "compaction")
    assert (c["data"]["phase"], c["data"]["trigger"]) == ("before", "auto")
    assert [r["data"]["source"] for r in of(recs, "session_start")] == ["new"]
    assert [r["data"]["reason"] for r in of(recs, "session_end")] == ["complete"]
    assert [r["data"]["prompt"] for r in of(recs, "user_prompt")] == ["Run the tests"]
    assert of(recs, "assistant_response") == []  # Copilot CLI's Stop carries no reply
    assert FAKE_TOKEN not in json.dumps(recs)
    assert recs[0]["timestamp"] == FX.lines[0]["payload"]["timestamp"]


def test_a_camel_case_payload_without_its_event_in_argv_is_dropped_and_logged(install):
    install.sensor("all", everything(install.root / "o.jsonl"))
    camel = FX.lines[10]["payload"]
    assert "hook_event_name" not in camel
    run_hook(install, "copilot", camel)
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    assert [e["kind"] for e in log] == ["hook.no_event_name"]
    assert not install.sessions().exists()


def test_camel_case_timestamps_are_milliseconds():
    [d] = new_builder().build("preToolUse", FX.lines[10]["payload"], 1)
    assert d.hook_event == "PreToolUse" and d.timestamp.startswith("2026-11-29T")
