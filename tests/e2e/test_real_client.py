"""The real Claude Code client, wired by `ways reconcile`, checked record for record
against what it sent (a raw recording hook beside ours is the ground truth)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from . import harness, usage_truth
from .messages_api import FAKE_TOKEN, THINKING

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = harness.prepare(tmp_path_factory.mktemp("claude-e2e"))
    harness.run(s)
    return s


def of(records, section):
    return [r for r in records if r["section"] == section]


def sent(truth, event):
    return [t for t in truth if t.get("hook_event_name") == event]


def test_the_session_ran_every_scenario(session):
    truth = session.truth()
    events = Counter(t["hook_event_name"] for t in truth)
    assert events["PostToolUseFailure"] >= 1 and events["SubagentStart"] >= 1
    assert events["PreCompact"] == 1
    assert any(t.get("agent_id") for t in sent(truth, "PreToolUse"))
    assert all(not r.get("is_error") for r in session.results)


def test_every_tool_call_exactly_once(session):
    truth, records = session.truth(), session.records()
    want = Counter(t["tool_use_id"] for t in sent(truth, "PreToolUse"))
    got = Counter(r["data"]["tool_use_id"] for r in of(records, "tool_call"))
    assert got == want and set(got.values()) == {1}


def test_every_result_once_paired_and_failures_marked(session):
    truth, records = session.truth(), session.records()
    want = {t["tool_use_id"]: "success" for t in sent(truth, "PostToolUse")}
    want.update({t["tool_use_id"]: "failure" for t in sent(truth, "PostToolUseFailure")})
    results = of(records, "tool_result")
    assert len(results) == len(want)
    assert {r["data"]["tool_use_id"]: r["data"]["status"] for r in results} == want
    calls = {r["data"]["tool_use_id"] for r in of(records, "tool_call")}
    assert set(want) <= calls
    [failed] = [r for r in results if r["data"]["status"] == "failure"]
    assert failed["data"]["error"].startswith("Exit code 3")


def test_subagent_tool_calls_carry_the_subagent(session):
    truth, records = session.truth(), session.records()
    by_id = {r["data"]["tool_use_id"]: r for r in of(records, "tool_call")}
    inside = [t for t in sent(truth, "PreToolUse") if t.get("agent_id")]
    assert inside
    for t in inside:
        rec = by_id[t["tool_use_id"]]
        assert (rec["agent_id"], rec["agent_type"]) == (t["agent_id"], t["agent_type"])
    for t in sent(truth, "PreToolUse"):
        if not t.get("agent_id"):
            assert by_id[t["tool_use_id"]]["agent_type"] == "main"
    starts = of(records, "subagent")
    assert {(r["data"]["phase"], r["agent_type"]) for r in starts} >= {
        ("start", "general-purpose"),
        ("stop", "general-purpose"),
    }


def test_every_prompt_once(session):
    truth, records = session.truth(), session.records()
    want = Counter(t["prompt"] for t in sent(truth, "UserPromptSubmit"))
    assert Counter(r["data"]["prompt"] for r in of(records, "user_prompt")) == want


def test_every_reply_once_main_subagent_and_internal(session):
    truth, records = session.truth(), session.records()
    want = Counter()
    for t in sent(truth, "Stop"):
        want[(t["last_assistant_message"], "main")] += 1
    for t in sent(truth, "SubagentStop"):
        want[(t["last_assistant_message"], t.get("agent_type") or "internal")] += 1
    got = Counter((r["data"]["text"], r["agent_type"]) for r in of(records, "assistant_response"))
    assert got == want
    assert any(kind == "internal" for _, kind in got)
    assert of(records, "queued_message") == []  # every prompt went through the queue as a turn


def test_compaction_before_after_and_its_summary(session):
    phases = [r["data"]["phase"] for r in of(session.records(), "compaction")]
    assert phases == ["before", "after", "summary"]
    before = of(session.records(), "compaction")[0]
    assert before["data"]["trigger"] == "manual"
    [t] = sent(session.truth(), "PostCompact")
    summary = of(session.records(), "compaction")[2]["data"]
    assert (summary["trigger"], summary["summary"]) == (t["trigger"], t["compact_summary"])


def test_every_reply_carries_model_and_the_sum_of_its_api_calls(session):
    """Main replies: the calls of their turn in the transcript; a subagent's reply (and
    its stop record), Claude Code's internal agents' too: the calls of its own file."""
    records = session.records()
    main = [r["data"] for r in of(records, "assistant_response") if r["agent_type"] == "main"]
    assert main and all("usage_missing" not in d for d in main)
    assert [usage_truth.tokens(d) for d in main] == usage_truth.replies(session.transcript())
    stops = {r["data"]["agent_id"]: r["data"] for r in of(records, "subagent")
             if r["data"]["phase"] == "stop"}  # fmt: skip
    others = [r for r in of(records, "assistant_response") if r["agent_type"] != "main"]
    assert others and len(stops) == len(others)
    by_text = {t["last_assistant_message"]: t for t in sent(session.truth(), "SubagentStop")}
    for r in others:
        t = by_text[r["data"]["text"]]
        path = Path(t["agent_transcript_path"])
        if not path.exists():  # 2.1.332 keeps no file for its compaction agents
            assert r["data"]["usage"] is None and r["data"]["usage_missing"] == "absent"
            continue
        want = usage_truth.agent(path)
        assert usage_truth.tokens(r["data"]) == want
        assert usage_truth.tokens(stops[t["agent_id"]]) == want
        assert want[1]["api_calls"] >= 2  # the subagent's own: its Bash call and its answer
    assert any(r["agent_type"] == "general-purpose" for r in others)


def test_every_tool_call_has_one_permission_decision(session):
    decisions = [r for r in of(session.records(), "permission") if r["data"]["phase"] == "decision"]
    ids = Counter(r["data"]["tool_use_id"] for r in decisions)
    assert ids == Counter(t["tool_use_id"] for t in sent(session.truth(), "PreToolUse"))
    assert {r["data"]["decision"] for r in decisions} == {"allowed_by_rule"}
    inside = {r["data"]["tool_use_id"]: r["agent_id"] for r in decisions}
    for t in sent(session.truth(), "PreToolUse"):
        assert inside[t["tool_use_id"]] == (t.get("agent_id") or None)


def test_every_session_start_and_end(session):
    truth, records = session.truth(), session.records()
    assert [r["data"]["source"] for r in of(records, "session_start")] == [
        t["source"] for t in sent(truth, "SessionStart")
    ]
    assert [r["data"]["reason"] for r in of(records, "session_end")] == [
        t["reason"] for t in sent(truth, "SessionEnd")
    ]


def test_no_thinking_anywhere_and_the_secret_masked(session):
    text = (session.audit_dir / f"{session.session_id}.jsonl").read_text()
    assert THINKING in session.transcript().read_text()  # the model did think
    assert THINKING not in text
    assert FAKE_TOKEN in session.truth_path.read_text()  # Claude Code sent it to hooks
    assert FAKE_TOKEN not in text
    masked = [r for r in session.records() if r.get("redactions")]
    assert {x["kind"] for r in masked for x in r["redactions"]} == {"github-token"}


def test_sequence_numbers_and_the_chain(session):
    records = session.records()
    assert [r["rule_seq"] for r in records] == list(range(1, len(records) + 1))
    seqs = [r["seq"] for r in records]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    path = session.audit_dir / f"{session.session_id}.jsonl"
    r = session.ways("sensors", "verify", str(path), "--rule", "e2e/all")
    assert r.returncode == 0, r.stdout


def test_every_record_of_the_resumed_session_is_signed_to_its_end(session):
    """Each prompt is a `claude -p --resume` run whose SessionEnd removes the session
    folder: the tree goes on from the ledger (evidence/carry.py), so `verify --key`
    proves every record and each run's end (issue 35 item 1)."""
    keys = session.ways("keys", "show", "--json")
    assert keys.returncode == 0, keys.stderr
    vkey = json.loads(keys.stdout)["verifier_key"]
    path = session.audit_dir / f"{session.session_id}.jsonl"
    r = session.ways("sensors", "verify", str(path), "--key", vkey)
    assert r.returncode == 0, r.stdout
    assert f"signed: {len(session.records())} records in 1 tree(s)" in r.stdout
    ends = [x for x in map(json.loads, path.read_text().splitlines()) if x.get("end")]
    assert len(ends) >= len(session.results)  # each run of the client ended its tree
    events = (session.root / "state" / "agent-ways" / "events.log").read_text()
    assert "evidence.untracked" not in events


def test_claude_code_shows_no_hook_error(session):
    # Claude Code 2.1.332 records a hook run in the transcript when it printed something
    # (hook_success) or failed (hook_non_blocking_error, hook_blocking_error ...); ours
    # must never appear: silent, exit 0, every time.
    lines = [json.loads(x) for x in session.transcript().read_text().splitlines() if x.strip()]
    hook_rows = [
        x["attachment"]
        for x in lines
        if x.get("type") == "attachment"
        and str(x["attachment"].get("type", "")).startswith("hook_")
    ]
    ours = [a for a in hook_rows if "hook sensors" in str(a.get("command", ""))]
    assert ours == []
    assert all(not r.get("is_error") for r in session.results)


def test_replaying_the_real_transcript_finds_the_same_tool_calls(session):
    """`ways sensors test` reads the real transcript (and its subagents/ folder) into the
    same records the hook path produced."""
    r = session.ways(
        "sensors", "test", "e2e/all", "--transcript", str(session.transcript()), "--json"
    )
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)["sent"]
    live = {x["data"]["tool_use_id"]: x for x in of(session.records(), "tool_call")}
    again = {x["data"]["tool_use_id"]: x for x in of(replayed, "tool_call")}
    assert set(again) == set(live)
    for tid, rec in live.items():
        assert (again[tid]["agent_id"], again[tid]["agent_type"]) == (
            rec["agent_id"],
            rec["agent_type"],
        )
        assert again[tid]["data"]["input"] == rec["data"]["input"]
    assert FAKE_TOKEN not in r.stdout and THINKING not in r.stdout
