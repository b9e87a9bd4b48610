"""The real Codex CLI client (0.169.0, from npm), wired by `ways reconcile --agent codex`,
checked record for record against what it sent (a recording hook beside ours is the
ground truth): four `codex exec` turns of one session, with a secret, parallel calls, a
failing command whose exit code only the rollout holds, and a plain reply; the model
reasons every turn."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from . import agents_harness as harness
from .codex_api import FAKE_TOKEN, THINKING

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = harness.prepare(tmp_path_factory.mktemp("codex-e2e"), "codex")
    harness.run_codex(s)
    return s


def of(records, section):
    return [r for r in records if r["section"] == section]


def sent(truth, event):
    return [t for t in truth if t.get("hook_event_name") == event]


def rollout_outcomes(session) -> dict[str, int]:
    """call id -> exit code, from the rollout (Codex's own record of each command)."""
    out = {}
    for line in session.session_file().read_text().splitlines():
        obj = json.loads(line)
        item = obj.get("payload", {}).get("item") or {}
        if item.get("type") == "CommandExecution":
            out[item["id"]] = item["exit_code"]
    return out


def test_the_session_ran_every_scenario(session):
    truth = session.truth()
    assert all(r["_rc"] == 0 for r in session.results)
    commands = [t["tool_input"]["command"] for t in sent(truth, "PreToolUse")]
    assert "echo failing >&2; exit 3" in commands and "echo par-b" in commands
    assert len(sent(truth, "SessionStart")) == len(harness.PROMPTS)
    # what Codex leaves out: the failing command's PostToolUse has no exit code
    [failed] = [t for t in sent(truth, "PostToolUse") if "exit 3" in t["tool_input"]["command"]]
    assert "exit" not in json.dumps({k: v for k, v in failed.items() if k != "tool_input"})


def test_every_record_is_codex_s_and_chained(session):
    records = session.records()
    assert {r["agent"] for r in records} == {"codex"}
    assert [r["rule_seq"] for r in records] == list(range(1, len(records) + 1))
    path = session.audit_dir / f"all-{session.session_id}.jsonl"
    r = session.ways("sensors", "verify", str(path), "--rule", "e2e/all")
    assert r.returncode == 0, r.stdout


def test_every_tool_call_once_and_every_result_paired_failures_marked(session):
    truth, records = session.truth(), session.records()
    want = Counter(t["tool_use_id"] for t in sent(truth, "PreToolUse"))
    got = Counter(r["data"]["tool_use_id"] for r in of(records, "tool_call"))
    assert got == want and set(got.values()) == {1}
    exits = rollout_outcomes(session)
    results = {r["data"]["tool_use_id"]: r["data"] for r in of(records, "tool_result")}
    assert set(results) == {t["tool_use_id"] for t in sent(truth, "PostToolUse")}
    for tid, data in results.items():
        assert data["exit_code"] == exits[tid]
        assert data["status"] == ("failure" if exits[tid] else "success")
    assert sorted(d["exit_code"] for d in results.values() if d["status"] == "failure") == [3]


def test_every_prompt_and_reply_once(session):
    truth, records = session.truth(), session.records()
    assert [r["data"]["prompt"] for r in of(records, "user_prompt")] == [
        t["prompt"] for t in sent(truth, "UserPromptSubmit")
    ]
    assert [r["data"]["text"] for r in of(records, "assistant_response")] == [
        t["last_assistant_message"] for t in sent(truth, "Stop")
    ]
    turns = {t["turn_id"] for t in sent(truth, "UserPromptSubmit")}
    assert {r["prompt_id"] for r in of(records, "user_prompt")} == turns


def test_every_reply_carries_its_turn_s_tokens_from_the_rollout(session):
    """Summed here from the real rollout's token_count lines, per turn, independently of
    the builder; each reply also names its model and is priced or says why not."""
    want: dict[str, list[int]] = {}
    turn = None
    for line in session.session_file().read_text().splitlines():
        obj = json.loads(line)
        p = obj.get("payload") or {}
        if obj.get("type") == "event_msg" and p.get("type") == "task_started":
            turn = p["turn_id"]
        if obj.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            last = p["info"]["last_token_usage"]
            row = want.setdefault(turn, [0, 0, 0])
            row[0] += last["input_tokens"] - last.get("cached_input_tokens", 0)
            row[1] += last["output_tokens"]
            row[2] += 1
    replies = of(session.records(), "assistant_response")
    assert replies and len(replies) == len(want)
    for r in replies:
        u = r["data"]["usage"]
        assert [u["input_tokens"], u["output_tokens"], u["api_calls"]] == want[r["prompt_id"]]
        assert isinstance(r["data"]["model"], str) and ("cost" in u or "cost_missing" in u)


def test_no_thinking_anywhere_and_the_secret_masked(session):
    text = (session.audit_dir / f"all-{session.session_id}.jsonl").read_text()
    assert THINKING in session.session_file().read_text()  # the rollout holds the reasoning
    assert THINKING not in text
    assert FAKE_TOKEN in session.truth_path.read_text()
    assert FAKE_TOKEN not in text
    kinds = {x["kind"] for r in session.records() for x in r.get("redactions", [])}
    assert kinds == {"github-token"}


def test_the_shell_rule_sees_every_shell_command(session):
    shell = session.records("shell")
    calls = of(session.records(), "tool_call")
    assert [r["data"]["command"] for r in shell] == [r["data"]["command"] for r in calls]


def test_sessions_start_and_end_per_process(session):
    truth, records = session.truth(), session.records()
    assert [r["data"]["source"] for r in of(records, "session_start")] == [
        t["source"] for t in sent(truth, "SessionStart")
    ]
    assert len(of(records, "session_end")) == len(sent(truth, "SessionEnd"))


def test_replaying_the_rollout_finds_the_same_tool_calls(session):
    r = session.ways(
        "sensors", "test", "e2e/all", "--transcript", str(session.session_file()), "--json"
    )
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)["sent"]
    live = {x["data"]["tool_use_id"]: x["data"] for x in of(session.records(), "tool_call")}
    again = {x["data"]["tool_use_id"]: x["data"] for x in of(replayed, "tool_call")}
    assert set(again) == set(live)
    for tid, data in live.items():
        assert again[tid]["input"] == data["input"]
    status = {x["data"]["tool_use_id"]: x["data"]["status"] for x in of(replayed, "tool_result")}
    assert status == {
        x["data"]["tool_use_id"]: x["data"]["status"] for x in of(session.records(), "tool_result")
    }
    assert THINKING not in r.stdout and FAKE_TOKEN not in r.stdout
