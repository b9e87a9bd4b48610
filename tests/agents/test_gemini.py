"""The Gemini CLI adapter, on the real client's recorded session
(tests/fixtures/gemini-cli-0.61.0/) played through the real hook and dispatcher, the chat
file growing as it did: failures read from llmContent, calls paired by order, thinking
never exported, a PreCompress that compressed nothing never a compaction."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ways_sensors.agents.gemini.adapter import new_builder
from ways_sensors.agents.gemini.builder import outcome

from ..e2e.agents_harness import compressions
from .fixtures import (
    FAKE_TOKEN,
    GEMINI,
    THINKING,
    chat_turns,
    everything,
    live_session,
    load,
    of,
)

FX = load(GEMINI)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The fixture's session through the real hook and dispatcher, once for the module."""
    yield from live_session(tmp_path_factory, FX, "gemini")


def sent(event):
    return FX.payloads(event)


def test_the_recorded_session_has_every_scenario():
    commands = [p["tool_input"]["command"] for p in sent("BeforeTool")]
    assert "echo failing >&2; exit 3" in commands and "echo par-b" in commands
    assert any(FAKE_TOKEN in c for c in commands)
    # what Gemini leaves out: no id on tool events, the exit code only inside llmContent
    keys = {k for p in sent("BeforeTool") + sent("AfterTool") for k in p if k.endswith("id")}
    assert keys == {"session_id"}
    [failed] = [p for p in sent("AfterTool") if "exit 3" in p["tool_input"]["command"]]
    assert "Exit Code: 3" in failed["tool_response"]["llmContent"]
    assert "error" not in failed["tool_response"]
    # thinking reaches AfterModel, one run per streamed chunk; PreCompress before every call
    assert any(THINKING in json.dumps(p) for p in sent("AfterModel"))
    assert len(sent("AfterModel")) > len(sent("AfterAgent"))
    real = compressions(FX.payloads())
    assert 0 < len(real) < len(sent("PreCompress"))


def test_every_record_is_gemini_s(live):
    _, recs, _ = live
    assert recs and {r["agent"] for r in recs} == {"gemini"}
    assert {r["session_id"] for r in recs} == {FX.session_id}


def test_every_tool_call_once_paired_with_its_result_failures_marked(live):
    _, recs, _ = live
    calls, results = of(recs, "tool_call"), of(recs, "tool_result")
    want = [p["tool_input"]["command"] for p in sent("BeforeTool")]
    got = [r["data"]["input"]["command"] for r in calls]
    assert len(got) == len(want) and [c for c in got if "REDACTED" not in c] == [
        c for c in want if FAKE_TOKEN not in c
    ]
    ids = [r["data"]["tool_use_id"] for r in calls]
    assert len(set(ids)) == len(ids)  # synthetic ids, unique across the session's processes
    assert Counter(r["data"]["tool_use_id"] for r in results) == Counter(ids)
    by_id = {r["data"]["tool_use_id"]: r["data"] for r in calls}
    for r in results:  # each result carries its own call's input
        assert by_id[r["data"]["tool_use_id"]]["command"] == r["data"]["command"]
    status = {r["data"]["command"]: r["data"]["status"] for r in results}
    assert status.pop("echo failing >&2; exit 3") == "failure"
    assert set(status.values()) == {"success"}
    [failed] = [r["data"] for r in results if r["data"]["status"] == "failure"]
    assert failed["exit_code"] == 3 and failed["error"] == "Exit code 3\nfailing"
    assert {r["data"]["tool_kind"] for r in calls + results} == {"shell"}


def test_every_prompt_and_reply_once_thinking_never(live):
    _, recs, _ = live
    assert [r["data"]["prompt"] for r in of(recs, "user_prompt")] == [
        p["prompt"] for p in sent("BeforeAgent")
    ]
    assert [r["data"]["text"] for r in of(recs, "assistant_response")] == [
        p["prompt_response"] for p in sent("AfterAgent")
    ]
    assert {r["hook_event"] for r in recs} <= {
        "SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent",
        "PreCompress", "SessionEnd",
    }  # fmt: skip
    text = json.dumps(recs)
    assert THINKING not in text and FAKE_TOKEN not in text
    assert {x["kind"] for r in recs for x in r.get("redactions", [])} == {"github-token"}


def test_every_reply_carries_its_model_and_its_turn_s_tokens_from_the_chat_file(live):
    """input_tokens without the cached ones (the chat file's `input` includes them),
    thoughts counted as output; priced; the session's cost their sum."""
    _, recs, _ = live
    replies = of(recs, "assistant_response")
    turns = chat_turns(FX.session_bytes)
    assert len(replies) == len(turns) == len(sent("AfterAgent"))
    total = 0.0
    for r, calls in zip(replies, turns, strict=True):
        u = r["data"]["usage"]
        toks = [t for t, _ in calls.values()]
        want = {
            "input_tokens": sum(t["input"] + t.get("tool", 0) - t["cached"] for t in toks),
            "cache_read_input_tokens": sum(t["cached"] for t in toks),
            "output_tokens": sum(t["output"] + t.get("thoughts", 0) for t in toks),
            "api_calls": len(calls),
        }
        assert {k: u[k] for k in want} == want and u["cache_creation_input_tokens"] == 0
        assert r["data"]["model"] == list(calls.values())[-1][1] == "gemini-3.8-flash"
        assert "model" not in r["data"]["extra"] and "models" not in u
        assert u["cost"]["currency"] == "USD" and u["cost"]["amount"] > 0
        total += u["cost"]["amount"]
    assert sum(len(c) for c in turns) > len(turns)  # a tool call's turn: two model calls
    ends = of(recs, "session_end")
    assert ends[-1]["data"]["cost"]["replies"] == len(replies)
    assert ends[-1]["data"]["cost"]["amount"] == pytest.approx(total)


def test_a_turn_s_tokens_cached_thoughts_and_tool_prompts_and_several_models(tmp_path):
    """The recorded chat file's first turn, its calls' tokens changed to what the API
    gives with caching, thinking and a tool prompt: input includes the cached tokens
    (kept apart), thoughts are billed as output; calls of several models (Gemini CLI's
    routing) are named, and no single price is guessed for them."""
    lines = FX.session_bytes.splitlines(keepends=True)
    end = next(i for i, x in enumerate(lines) if b'"FINAL-REPLY' in x) + 1
    chat = tmp_path / "chat.jsonl"
    models = iter(["gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"])

    def changed(line: bytes) -> bytes:
        obj = json.loads(line)
        if obj.get("type") != "gemini":
            return line
        obj["tokens"] = {"input": 9000, "cached": 6000, "output": 40, "thoughts": 300,
                         "tool": 5, "total": 9345}  # fmt: skip
        obj["model"] = next(models)
        return json.dumps(obj).encode() + b"\n"

    data = b"".join(changed(x) for x in lines[:end])
    chat.write_bytes(data)
    p = {"session_id": FX.session_id, "transcript_path": str(chat), "prompt_response": "x"}
    b = new_builder()
    [r] = b.build("AfterAgent", {**p, "hook_event_name": "AfterAgent"}, 1, len(data))
    u = r.data["usage"]
    assert [u["input_tokens"], u["cache_read_input_tokens"], u["output_tokens"]] == [
        2 * 3005,
        2 * 6000,
        2 * 340,
    ]
    assert u["api_calls"] == 2 and u["models"] == ["gemini-2.5-pro", "gemini-2.5-flash"]
    assert r.data["model"] == "gemini-2.5-flash"
    assert json.loads(b.state())["read"] == len(data)  # an offset, no content at rest
    from ways_sensors.dispatch import pricing

    assert pricing.price(r.data["model"], u, "gemini", None) == (
        "the reply's calls used several models"
    )
    del u["models"]
    cost = pricing.price(r.data["model"], u, "gemini", None)
    assert isinstance(cost, dict) and cost["amount"] > 0


def test_only_the_compressions_that_happened_are_compactions(live):
    _, recs, _ = live
    truth = FX.payloads()
    real = compressions(truth)
    compaction = of(recs, "compaction")
    assert [r["data"]["phase"] for r in compaction] == ["before", "after"] * len(real)
    befores = [r["timestamp"] for r in compaction if r["data"]["phase"] == "before"]
    assert befores == [truth[i]["timestamp"] for i in real]


def test_record_times_are_gemini_s_own(live):
    _, recs, _ = live
    prompts = of(recs, "user_prompt")
    assert [r["timestamp"] for r in prompts] == [p["timestamp"] for p in sent("BeforeAgent")]


def test_a_precompress_is_decided_by_what_followed_it_in_the_chat_file(tmp_path):
    """Held until a later event; a restart of the chat after it is a compression, a
    message first is not; at SessionEnd an undecided one is dropped."""
    chat = tmp_path / "chat.jsonl"
    base = {"session_id": "s", "transcript_path": str(chat), "hook_event_name": "PreCompress"}
    pre = {**base, "trigger": "auto", "timestamp": "2026-11-30T00:00:01.000Z"}
    end = {**base, "hook_event_name": "SessionEnd", "reason": "exit"}
    header = b'{"sessionId":"s","projectHash":"h","kind":"main"}\n'
    message = b'{"id":"m1","timestamp":"t","type":"user","content":[{"text":"hi"}]}\n'
    restart = b'{"$set":{"sessionId":"s"}}\n'

    def run(after: bytes) -> list[str]:
        chat.write_bytes(header)
        b = new_builder()
        assert b.build("PreCompress", pre, 1, len(header)) == []  # held
        chat.write_bytes(header + after)
        return [d.data["phase"] for d in b.build("SessionEnd", end, 2) if d.section == "compaction"]

    assert run(restart + message) == ["before", "after"]
    assert run(message + restart) == []  # compressed nothing; a later restart is not its
    assert run(b"") == []  # nothing followed: nothing to report


def test_a_manual_precompress_without_a_chat_file_is_a_compaction():
    b = new_builder(transcript=False)
    manual = {"session_id": "s", "hook_event_name": "PreCompress", "trigger": "manual"}
    assert [d.data["phase"] for d in b.build("PreCompress", manual, 1)] == ["before", "after"]
    assert b.build("PreCompress", {**manual, "trigger": "auto"}, 1) == []


def test_parallel_results_pair_by_their_input_whatever_their_order():
    b = new_builder()
    call = {"session_id": "s", "tool_name": "run_shell_command"}
    b.build("BeforeAgent", {**call, "prompt": "p", "timestamp": "2026-11-30T00:00:00Z"}, 1)
    a = {**call, "tool_input": {"command": "echo a"}}
    z = {**call, "tool_input": {"command": "echo z"}}
    [ca], [cz] = b.build("BeforeTool", a, 2), b.build("BeforeTool", z, 3)
    [rz] = b.build("AfterTool", {**z, "tool_response": {"llmContent": "z"}}, 4)
    [ra] = b.build("AfterTool", {**a, "tool_response": {"llmContent": "a"}}, 5)
    assert rz.data["tool_use_id"] == cz.data["tool_use_id"] != ca.data["tool_use_id"]
    assert ra.data["tool_use_id"] == ca.data["tool_use_id"]


@pytest.mark.parametrize(
    "response, status, code",
    [
        ({"llmContent": "Output: ok\nProcess Group PGID: 7"}, "success", None),
        ({"llmContent": "Output: x\nExit Code: 127\nProcess Group PGID: 7"}, "failure", 127),
        ({"llmContent": "Output: (empty)\nSignal: 9"}, "failure", None),
        ({"llmContent": "Output: (empty)\nError: spawn ENOENT"}, "failure", None),
        ({"llmContent": "x", "error": {"message": "denied", "type": "x"}}, "failure", None),
        ({"llmContent": [{"text": "Exit Code: 2"}]}, "failure", 2),
    ],
)
def test_failures_read_from_the_tool_response(response, status, code):
    got = outcome(response, shell=True)
    assert got["status"] == status and got.get("exit_code") == code


def test_sensors_test_replays_the_chat_file_into_the_same_tool_calls(live):
    install, recs, chat = live
    r = install.ways("sensors", "test", "all/all", "--transcript", str(chat), "--json")
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)["sent"]
    assert {x["agent"] for x in replayed} == {"gemini"}

    def tool_calls(rs: list[dict]) -> list[tuple]:
        return [(x["data"]["tool_name"], x["data"]["command"]) for x in of(rs, "tool_call")]

    def results(rs: list[dict]) -> list[tuple]:
        return [(x["data"]["command"], x["data"]["status"]) for x in of(rs, "tool_result")]

    assert tool_calls(replayed) == tool_calls(recs)
    assert Counter(results(replayed)) == Counter(results(recs))  # parallel calls end in any order
    assert [x["data"]["prompt"] for x in of(replayed, "user_prompt")] == [
        x["data"]["prompt"] for x in of(recs, "user_prompt")
    ]
    assert len(of(replayed, "compaction")) == len(of(recs, "compaction"))
    assert THINKING not in r.stdout and FAKE_TOKEN not in r.stdout


def test_sensors_test_finds_a_session_s_chat_file_by_its_id(install, tmp_path):
    install.sensor("all", everything(tmp_path / "o.jsonl"))
    chats = install.home / ".gemini" / "tmp" / "shop" / "chats"
    chats.mkdir(parents=True)
    sid = FX.session_id
    (chats / f"session-2026-11-30T00-16-{sid[:8]}.jsonl").write_bytes(FX.session_bytes)
    short = b'{"sessionId": "%s", "projectHash": "x", "kind": "main"}\n' % sid.encode()
    (chats / f"session-2026-11-30T00-17-{sid[:8]}.jsonl").write_bytes(short)  # a resume's
    r = install.ways("sensors", "test", "all/all", "--agent", "gemini", "--session", sid, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "T00-16-" in out["transcript"]  # the session's own file, not the short one
    assert len(of(out["sent"], "tool_call")) == len(sent("BeforeTool"))
