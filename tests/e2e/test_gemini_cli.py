"""The real Gemini CLI client (0.61.0, from npm), wired by `ways reconcile --agent gemini`,
checked record for record against what it sent (a recording hook beside ours is the
ground truth): four turns, one process each, with a secret, parallel calls, a failing
command and a plain reply; the model thinks every turn, and a tiny compression
threshold makes Gemini compress its chat now and then."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from . import agents_harness as harness
from .gemini_api import FAKE_TOKEN, THINKING

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = harness.prepare(tmp_path_factory.mktemp("gemini-e2e"), "gemini")
    harness.run_gemini(s)
    return s


def of(records, section):
    return [r for r in records if r["section"] == section]


def sent(truth, event):
    return [t for t in truth if t.get("hook_event_name") == event]


def test_the_session_ran_every_scenario(session):
    truth = session.truth()
    assert all(r["_rc"] == 0 and "error" not in r for r in session.results)
    commands = [t["tool_input"]["command"] for t in sent(truth, "BeforeTool")]
    assert "echo failing >&2; exit 3" in commands and "echo par-b" in commands
    assert any(THINKING in json.dumps(t) for t in sent(truth, "AfterModel"))
    assert len(sent(truth, "SessionStart")) == len(harness.PROMPTS)
    assert 0 < len(harness.compressions(truth)) < len(sent(truth, "PreCompress"))


def test_every_record_is_gemini_s_and_chained(session):
    records = session.records()
    assert {r["agent"] for r in records} == {"gemini"}
    assert [r["rule_seq"] for r in records] == list(range(1, len(records) + 1))
    path = session.audit_dir / f"all-{session.session_id}.jsonl"
    r = session.ways("sensors", "verify", str(path), "--rule", "e2e/all")
    assert r.returncode == 0, r.stdout


def test_every_tool_call_once_paired_with_its_result_failures_marked(session):
    truth, records = session.truth(), session.records()
    calls, results = of(records, "tool_call"), of(records, "tool_result")
    want = Counter(t["tool_input"]["command"] for t in sent(truth, "BeforeTool"))
    got = Counter(r["data"]["input"]["command"] for r in calls)
    assert sum(got.values()) == sum(want.values())
    assert +Counter({c: n for c, n in want.items() if FAKE_TOKEN not in c}) == +Counter(
        {c: n for c, n in got.items() if "REDACTED" not in c}
    )
    ids = [r["data"]["tool_use_id"] for r in calls]
    assert len(set(ids)) == len(ids)
    assert Counter(r["data"]["tool_use_id"] for r in results) == Counter(ids)
    command_of = {r["data"]["tool_use_id"]: r["data"]["command"] for r in calls}
    for r in results:
        assert r["data"]["command"] == command_of[r["data"]["tool_use_id"]]
    truth_failed = [
        t["tool_input"]["command"]
        for t in sent(truth, "AfterTool")
        if re.search(r"Exit Code: [1-9]", t["tool_response"]["llmContent"])
    ]
    failed = [r["data"] for r in results if r["data"]["status"] == "failure"]
    assert [d["command"] for d in failed] == truth_failed == ["echo failing >&2; exit 3"]
    assert failed[0]["exit_code"] == 3


def test_every_prompt_and_reply_once(session):
    truth, records = session.truth(), session.records()
    assert [r["data"]["prompt"] for r in of(records, "user_prompt")] == [
        t["prompt"] for t in sent(truth, "BeforeAgent")
    ]
    assert [r["data"]["text"] for r in of(records, "assistant_response")] == [
        t["prompt_response"] for t in sent(truth, "AfterAgent")
    ]


def test_every_reply_carries_its_turn_s_tokens_from_the_chat_file(session):
    """Counted here from the real chat file's gemini messages, per turn, independently
    of the builder; each reply also names its model and is priced or says why not."""
    from ..agents.fixtures import chat_turns

    turns = chat_turns(session.session_file().read_bytes())
    replies = of(session.records(), "assistant_response")
    assert replies and len(replies) == len(turns)
    for r, calls in zip(replies, turns, strict=True):
        u, toks = r["data"]["usage"], [t for t, _ in calls.values()]
        assert u["api_calls"] == len(calls)
        assert u["input_tokens"] == sum(t["input"] - t["cached"] + t.get("tool", 0) for t in toks)
        assert u["output_tokens"] == sum(t["output"] + t.get("thoughts", 0) for t in toks)
        assert r["data"]["model"] == list(calls.values())[-1][1]
        assert "cost" in u or "cost_missing" in u


def test_compactions_only_where_gemini_compressed(session):
    truth, records = session.truth(), session.records()
    real = harness.compressions(truth)
    compaction = of(records, "compaction")
    assert [r["data"]["phase"] for r in compaction] == ["before", "after"] * len(real)
    assert [r["timestamp"] for r in compaction if r["data"]["phase"] == "before"] == [
        truth[i]["timestamp"] for i in real
    ]


def test_sessions_start_and_end_per_process(session):
    truth, records = session.truth(), session.records()
    assert [r["data"]["source"] for r in of(records, "session_start")] == [
        t["source"] for t in sent(truth, "SessionStart")
    ]
    assert [r["data"]["reason"] for r in of(records, "session_end")] == [
        t["reason"] for t in sent(truth, "SessionEnd")
    ]


def test_no_thinking_anywhere_and_the_secret_masked(session):
    text = (session.audit_dir / f"all-{session.session_id}.jsonl").read_text()
    assert THINKING in session.session_file().read_text()  # Gemini stored the thoughts
    assert THINKING in session.truth_path.read_text()  # and sent them to AfterModel hooks
    assert THINKING not in text
    assert FAKE_TOKEN in session.truth_path.read_text()
    assert FAKE_TOKEN not in text
    kinds = {x["kind"] for r in session.records() for x in r.get("redactions", [])}
    assert kinds == {"github-token"}


def test_the_shell_rule_sees_every_shell_command(session):
    shell = session.records("shell")
    calls = of(session.records(), "tool_call")
    assert [r["data"]["command"] for r in shell] == [r["data"]["command"] for r in calls]
    assert {r["data"]["tool_kind"] for r in shell} == {"shell"}


def test_gemini_shows_no_hook_error(session):
    for result in session.results:
        lines = [x for x in result["_stderr"].splitlines() if "hook" in x.lower()]
        assert lines == [], lines


# the scripted model asks for these two in one turn: Gemini CLI runs them at once, and
# their BeforeTool hooks reach the spool in either order (seen once in a full run), while
# the chat file keeps the model's order
PARALLEL = ("echo par-a", "echo par-b")


def in_turn_order(records: list[dict]) -> list[str]:
    """The records' commands in order, the parallel pair put in the model's order."""
    commands = [x["data"]["command"] for x in records]
    slots = [i for i, c in enumerate(commands) if c in PARALLEL]
    for i, c in zip(slots, sorted(commands[i] for i in slots), strict=True):
        commands[i] = c
    return commands


def test_replaying_the_chat_file_finds_the_same_tool_calls(session):
    r = session.ways(
        "sensors", "test", "e2e/all", "--transcript", str(session.session_file()), "--json"
    )
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)["sent"]
    live = of(session.records(), "tool_call")
    again = of(replayed, "tool_call")
    assert in_turn_order(again) == in_turn_order(live)
    status = Counter(
        (x["data"]["command"], x["data"]["status"]) for x in of(replayed, "tool_result")
    )
    assert status == Counter(
        (x["data"]["command"], x["data"]["status"]) for x in of(session.records(), "tool_result")
    )
    assert THINKING not in r.stdout and FAKE_TOKEN not in r.stdout
