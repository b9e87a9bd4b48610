"""The Codex CLI adapter, on the real client's recorded session (tests/fixtures/codex-0.169.0/)
played through the real hook and dispatcher: records for record against what Codex sent,
failures recovered from the rollout, and the rollout replayed by `ways sensors test`."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ways_sensors.agents.codex import builder as codex_builder
from ways_sensors.agents.codex.adapter import new_builder

from .fixtures import CODEX, FAKE_TOKEN, THINKING, everything, live_session, load, of

FX = load(CODEX)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The fixture's session through the real hook and dispatcher, once for the module."""
    yield from live_session(tmp_path_factory, FX, "codex")


def sent(event):
    return FX.payloads(event)


def test_the_recorded_session_has_every_scenario():
    commands = [p["tool_input"]["command"] for p in sent("PreToolUse")]
    assert any(FAKE_TOKEN in c for c in commands) and "echo failing >&2; exit 3" in commands
    turns = Counter(p["turn_id"] for p in sent("PreToolUse"))
    assert 2 in turns.values()  # two calls in one response
    # Codex told the hook nothing about the failure: no exit code in any payload
    [failed] = [p for p in sent("PostToolUse") if "exit 3" in p["tool_input"]["command"]]
    assert "exit_code" not in json.dumps(failed) and failed["tool_response"] == "failing\n"
    assert THINKING in FX.session_bytes.decode()


def test_every_record_is_codex_s(live):
    _, recs, _ = live
    assert recs and {r["agent"] for r in recs} == {"codex"}
    assert {r["session_id"] for r in recs} == {FX.session_id}


def test_every_tool_call_once_with_its_kind_and_command(live):
    _, recs, _ = live
    want = {p["tool_use_id"]: p["tool_input"]["command"] for p in sent("PreToolUse")}
    calls = of(recs, "tool_call")
    assert Counter(r["data"]["tool_use_id"] for r in calls) == Counter(set(want))
    for r in calls:
        assert r["data"]["tool_name"] == "Bash" and r["data"]["tool_kind"] == "shell"
        command = want[r["data"]["tool_use_id"]]
        if FAKE_TOKEN in command:  # masked, at data.command as at data.input.command
            assert r["data"]["command"] == r["data"]["input"]["command"]
            assert "[REDACTED:github-token:" in r["data"]["command"]
        else:
            assert r["data"]["command"] == command
    by_turn = {p["tool_use_id"]: p["turn_id"] for p in sent("PreToolUse")}
    assert all(r["prompt_id"] == by_turn[r["data"]["tool_use_id"]] for r in calls)


def test_every_result_paired_and_the_failure_recovered_from_the_rollout(live):
    _, recs, _ = live
    results = {r["data"]["tool_use_id"]: r["data"] for r in of(recs, "tool_result")}
    assert set(results) == {p["tool_use_id"] for p in sent("PostToolUse")}
    statuses = {
        p["tool_input"]["command"]: results[p["tool_use_id"]]["status"] for p in sent("PostToolUse")
    }
    assert statuses.pop("echo failing >&2; exit 3") == "failure"
    assert set(statuses.values()) == {"success"}
    [failed] = [d for d in results.values() if d["status"] == "failure"]
    assert failed["exit_code"] == 3 and failed["error"] == "Exit code 3\nfailing"
    assert {d["exit_code"] for d in results.values() if d["status"] == "success"} == {0}


def test_every_prompt_and_reply_once_and_no_thinking(live):
    _, recs, _ = live
    prompts = [r["data"]["prompt"] for r in of(recs, "user_prompt")]
    assert prompts == [p["prompt"] for p in sent("UserPromptSubmit")]
    replies = [r["data"]["text"] for r in of(recs, "assistant_response")]
    assert replies == [p["last_assistant_message"] for p in sent("Stop")]
    text = json.dumps(recs)
    assert THINKING not in text and FAKE_TOKEN not in text
    masked = [x for r in recs for x in r.get("redactions", [])]
    assert masked and {x["kind"] for x in masked} == {"github-token"}


def test_every_reply_carries_its_model_and_its_turn_s_tokens_from_the_rollout(live):
    """The rollout's token_count lines (one per model call) summed per turn, counted
    here independently of the builder; cached tokens apart from input_tokens."""
    _, recs, _ = live
    want: dict[str, list[int]] = {}
    turn = None
    for line in FX.session_bytes.decode().splitlines():
        obj = json.loads(line)
        p = obj.get("payload") or {}
        if obj.get("type") == "event_msg" and p.get("type") == "task_started":
            turn = p["turn_id"]
        if obj.get("type") == "event_msg" and p.get("type") == "token_count":
            last = p["info"]["last_token_usage"]
            row = want.setdefault(turn, [0, 0, 0, 0])
            row[0] += last["input_tokens"] - last["cached_input_tokens"]
            row[1] += last["output_tokens"]
            row[2] += last["cached_input_tokens"]
            row[3] += 1
    replies = of(recs, "assistant_response")
    assert len(replies) == len(want) == len(sent("Stop"))
    for r in replies:
        u = r["data"]["usage"]
        assert r["data"]["model"] == "mock-model" and "model" not in r["data"]["extra"]
        got = [u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"], u["api_calls"]]
        assert got == want[r["prompt_id"]], r["prompt_id"]
        assert "cost_missing" in u or "cost" in u  # priced, or it says why not


def test_sessions_start_and_end_per_process(live):
    _, recs, _ = live
    assert [r["data"]["source"] for r in of(recs, "session_start")] == [
        p["source"] for p in sent("SessionStart")
    ]
    assert len(of(recs, "session_end")) == len(sent("SessionEnd"))


def test_a_result_the_rollout_does_not_hold_yet_waits_for_it(tmp_path):
    """PostToolUse built before Codex wrote the command's outcome: parked, then released
    (as a failure) by the next event once the rollout has it."""
    data = FX.session_bytes
    post = next(p for p in sent("PostToolUse") if "exit 3" in p["tool_input"]["command"])
    cut = data.index(b'"exit_code":3')
    cut = data.rindex(b"\n", 0, cut) + 1  # the rollout up to the CommandExecution line
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data[:cut])
    post = {**post, "transcript_path": str(path)}
    b = new_builder()
    b.at = ("0000000001.seg", 7)  # where the dispatcher found the entry in the spool
    assert b.build("PostToolUse", post, 1) == []
    state = b.state()
    assert post["tool_response"].strip() not in state  # at rest: the frame's place, not its text
    path.write_bytes(data)
    b = new_builder(state)  # a dispatcher restart in between reads the frame back
    assert b.held() == {"0000000001.seg"}
    frames = {("0000000001.seg", 7): ("PostToolUse", post, 1)}
    assert b.restore(lambda seg, off: frames.get((seg, off))) == 0
    stop = {**sent("Stop")[1], "transcript_path": str(path)}
    drafts = b.build("Stop", stop, 2)
    assert [d.section for d in drafts] == ["tool_result", "assistant_response"]
    assert drafts[0].data["status"] == "failure" and drafts[0].data["exit_code"] == 3
    assert drafts[0].hook_event == "PostToolUse" and drafts[0].agent == "codex"


def test_a_result_never_in_the_rollout_is_released_at_the_turn_s_end(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"")
    post = {**sent("PostToolUse")[0], "transcript_path": str(path)}
    b = new_builder()
    assert b.build("PostToolUse", post, 1) == []
    drafts = b.build("SessionEnd", {**sent("SessionEnd")[0], "transcript_path": str(path)}, 2)
    assert [d.section for d in drafts] == ["tool_result", "session_end"]
    assert drafts[0].data["status"] == "success" and "exit_code" not in drafts[0].data


def test_without_a_rollout_the_payload_alone_decides():
    """Codex --ephemeral sends transcript_path null; the blocking path reads no rollout."""
    post = {**sent("PostToolUse")[0], "transcript_path": None}
    [d] = new_builder().build("PostToolUse", post, 1)
    assert d.data["status"] == "success" and "exit_code" not in d.data
    assert d.prompt_id == post["turn_id"]


def test_the_payload_only_path_reads_the_rollout_tail(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(FX.session_bytes)
    post = next(p for p in sent("PostToolUse") if "exit 3" in p["tool_input"]["command"])
    [d] = new_builder(transcript=False).build(
        "PostToolUse", {**post, "transcript_path": str(path)}, 1
    )
    assert d.data["status"] == "failure" and d.data["exit_code"] == 3


def test_unknown_fields_are_kept_under_extra():
    pre = {**sent("PreToolUse")[0], "future_field": {"x": 1}}
    [d] = new_builder().build("PreToolUse", pre, 1)
    assert d.data["extra"]["future_field"] == {"x": 1}
    assert d.data["extra"]["model"] and "turn_id" not in d.data["extra"]


def test_events_the_builder_does_not_know_yield_nothing():
    for event in ("PermissionRequest", "line", "_sync", "", "PreModelRequest"):
        assert new_builder().build(event, {"hook_event_name": event}, 1) == []
    assert set(codex_builder.HANDLERS) >= {"PreCompact", "PostCompact", "SubagentStop"}


def test_sensors_test_replays_the_rollout_into_the_same_tool_calls(live):
    install, recs, rollout = live
    r = install.ways("sensors", "test", "all/all", "--transcript", str(rollout), "--json")
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)["sent"]
    assert {x["agent"] for x in replayed} == {"codex"}
    live_calls = {x["data"]["tool_use_id"]: x["data"] for x in of(recs, "tool_call")}
    again = {x["data"]["tool_use_id"]: x["data"] for x in of(replayed, "tool_call")}
    assert set(again) == set(live_calls)
    for tid, data in live_calls.items():
        assert again[tid]["input"] == data["input"] and again[tid]["command"] == data["command"]
    status = {x["data"]["tool_use_id"]: x["data"]["status"] for x in of(replayed, "tool_result")}
    assert status == {
        x["data"]["tool_use_id"]: x["data"]["status"] for x in of(recs, "tool_result")
    }
    assert THINKING not in r.stdout and FAKE_TOKEN not in r.stdout


def test_sensors_test_finds_a_session_s_rollout_by_its_id(install, tmp_path):
    install.sensor("all", everything(tmp_path / "o.jsonl"))
    folder = install.root / "codex-home" / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-11-30T00-17-00-{FX.session_id}.jsonl").write_bytes(FX.session_bytes)
    install.env["CODEX_HOME"] = str(install.root / "codex-home")
    args = ("sensors", "test", "all/all", "--agent", "codex", "--json")
    r = install.ways(*args, "--session", FX.session_id)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["transcript"].endswith(f"{FX.session_id}.jsonl")
    assert len(of(out["sent"], "tool_call")) == len(sent("PreToolUse"))
    r = install.ways(*args)  # the project's newest: its session_meta names another cwd
    assert r.returncode == 2 and "no transcript found" in r.stderr
