"""`signal: traces`: a session through the real hook and dispatcher becomes one trace of
GenAI spans at a loopback receiver that decodes every request with the official
protobuf definitions; a resent batch is the same spans."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ways_sensors.state.layout import Layout
from ways_sensors.traces import export
from ways_sensors.traces import ids as spans

from ..helpers import wait_until
from ..servers import Server
from ..sessions import AGENT_ID, EXPECTED, KNOWN, SID, ScriptedSession, span_records
from .receive import all_spans, attrs, rule

HEX64 = set("0123456789abcdef")


@pytest.fixture
def receiver():
    s = Server("otlp-traces")
    yield s
    s.close()


def traced(install, receiver, **fields) -> None:
    rule(install, receiver, chain="true", **fields)


def test_a_session_is_one_trace_of_genai_spans(install, receiver, tmp_path):
    traced(install, receiver)
    ScriptedSession(install, tmp_path / "t").play()
    assert wait_until(
        lambda: any(s.name == "invoke_agent claude-code" for s in all_spans(receiver))
    ), receiver.errors
    assert receiver.errors == []
    assert set(receiver.paths) == {"/v1/traces"}
    got = all_spans(receiver)
    ids = [s.span_id.hex() for s in got]
    assert len(ids) == len(set(ids))  # no span twice
    assert {s.trace_id.hex() for s in got} == {spans.trace_id(SID)}

    [root] = [s for s in got if not s.parent_span_id]
    assert root.name == "invoke_agent claude-code"
    a = attrs(root)
    assert (a["gen_ai.operation.name"], a["gen_ai.conversation.id"]) == ("invoke_agent", SID)
    assert a["gen_ai.provider.name"] == "anthropic"
    assert isinstance(a["ways.session.cost.amount"], float)  # the session's, named so
    assert "ways.cost.amount" not in a  # a span's cost is its own: the replies' (below)
    # what Phoenix (OpenInference) shows of the run: its first input, its last output
    assert a["openinference.span.kind"] == "AGENT" and a["session.id"] == SID
    assert (a["input.value"], a["output.value"]) == (KNOWN["prompt"], KNOWN["interrupted"])

    chats = [s for s in got if s.name.startswith("chat")]
    assert len(chats) == EXPECTED["assistant_response"]
    outputs = " ".join(attrs(c).get("gen_ai.output.messages", "") for c in chats)
    [first] = [c for c in chats if KNOWN["reply"] in attrs(c).get("output.value", "")]
    f = attrs(first)
    assert f["openinference.span.kind"] == "LLM" and f["input.value"] == KNOWN["prompt"]
    assert json.loads(f["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": KNOWN["prompt"]}]}
    ]
    assert f["llm.input_messages.0.message.content"] == KNOWN["prompt"]
    assert f["llm.output_messages.0.message.content"] == KNOWN["reply"]
    costs = [attrs(x).get("ways.cost.amount", 0.0) for x in got]
    assert sum(costs) == pytest.approx(a["ways.session.cost.amount"])
    assert KNOWN["reply"] in outputs and KNOWN["subagent_reply"] in outputs
    finish = sorted(attrs(c)["gen_ai.response.finish_reasons"][0] for c in chats)
    assert finish == ["interrupted", "stop", "stop"]
    # the prompts reached their reply's span as events, the queued message too
    event_text = json.dumps(
        [{kv.key: str(kv.value) for kv in e.attributes} for s in got for e in s.events]
    )
    for k in ("prompt", "queued", "instructions"):
        assert KNOWN[k] in event_text, k

    tools = [s for s in got if s.name.startswith("execute_tool")]
    bash = [s for s in tools if attrs(s)["gen_ai.tool.name"] == "Bash"]
    assert len(bash) == 2  # the result and the failure the session reports for one call
    failed = [s for s in bash if s.status.code == 2]
    assert len(failed) == 1 and attrs(failed[0])["error.type"] == "tool_error"
    ok = next(s for s in bash if s.status.code != 2)
    assert KNOWN["input"] in attrs(ok)["gen_ai.tool.call.arguments"]
    assert KNOWN["output"] in attrs(ok)["gen_ai.tool.call.result"]
    assert ok.end_time_unix_nano >= ok.start_time_unix_nano > 0

    # the subagent: its own invoke_agent span, its unfinished Grep call nested under it
    [sub] = [s for s in got if s.name == "invoke_agent Explore"]
    assert attrs(sub)["gen_ai.agent.id"] == AGENT_ID
    assert sub.parent_span_id == root.span_id
    grep = next(s for s in tools if attrs(s)["gen_ai.tool.name"] == "Grep")
    assert grep.parent_span_id.hex() == spans.span_id(SID, "agent", AGENT_ID)
    assert attrs(grep)["ways.unfinished"] is True
    sub_chat = next(c for c in chats if KNOWN["subagent_reply"] in str(attrs(c)))
    assert sub_chat.parent_span_id == sub.span_id

    # every span names the record that closed it, by rule_seq and chain hash
    for s in got:
        a = attrs(s)
        assert isinstance(a["ways.rule_seq"], int) and a["ways.rule_seq"] >= 1
        assert len(a["ways.chain.hash"]) == 64 and set(a["ways.chain.hash"]) <= HEX64


def test_metadata_projection_leaves_no_text_in_any_span(install, receiver, tmp_path):
    traced(install, receiver, fields="metadata")
    ScriptedSession(install, tmp_path / "t").play()
    assert wait_until(lambda: any(not s.parent_span_id for s in all_spans(receiver)))
    raw = b"".join(receiver.raw).decode()
    for text in KNOWN.values():
        assert text not in raw, text
    assert Counter(s.name.split(" ")[0] for s in all_spans(receiver))["chat"] == 3


def test_a_batch_sent_again_is_the_same_spans(tmp_path: Path):
    layout = Layout(str(tmp_path / "state"))
    folder = Path(layout.cursors_dir("s-resend"))
    folder.mkdir(parents=True)
    recs = span_records()
    first, second = recs[:5], recs[5:]  # the calls in one batch, their results in the next

    def send(batch):
        req = export.request(batch, "s-resend", "tr", "spans", [], "0", layout)
        return json.dumps(req, sort_keys=True)

    assert send(first) == "null"  # open calls make no span yet
    once = send(second)
    again = send(second)  # a crash before the cursor moved: the same batch once more
    assert once == again
    spans_sent = json.loads(once)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    tool = [s for s in spans_sent if s["name"] == "execute_tool Bash"]
    assert len(tool) == 3
    # each tool span starts at its call, carried over from the earlier batch
    assert [int(s["startTimeUnixNano"]) // 10**9 % 60 for s in tool] == [2, 3, 4]
    assert not any(s["attributes"] for s in tool if "ways.unfinished" in json.dumps(s))


def test_an_async_subagent_names_the_call_whose_result_named_it_and_outlives_it():
    """Claude Code may run a subagent asynchronously: its Agent call returns first (the
    result names the agent), the subagent starts and stops after it: under the agent,
    naming the call, so it never ends after its parent."""
    from ways_sensors.traces.spans import Spans
    from ways_sensors.traces.state import State

    def rec(n: int, section: str, data: dict, agent_id=None) -> dict:
        return {"section": section, "seq": n, "rule_seq": n, "session_id": "s-async",
                "agent": "claude-code", "agent_id": agent_id,
                "timestamp": f"2026-10-06T09:14:{n:02d}.000Z", "data": data}  # fmt: skip

    call = {"tool_name": "Agent", "tool_use_id": "toolu_a", "tool_kind": "agent"}
    out = Spans("s-async", State()).of([
        rec(1, "tool_call", {**call, "input": {"prompt": "go"}}),
        rec(2, "tool_call", {"tool_name": "Task", "tool_use_id": "toolu_other",
                             "tool_kind": "agent"}),  # another agent call, still open
        rec(3, "tool_result", {**call, "status": "success",
                               "output": {"isAsync": True, "agentId": "ag-async"}}),
        rec(4, "subagent", {"phase": "start", "agent_id": "ag-async", "agent_type": "Explore"},
            "ag-async"),
        rec(5, "subagent", {"phase": "stop", "agent_id": "ag-async", "agent_type": "Explore"},
            "ag-async"),
    ])  # fmt: skip
    [sub] = [s for s in out if s["name"] == "invoke_agent Explore"]
    assert sub["parentSpanId"] == spans.span_id("s-async", "root")
    named = {a["key"]: a["value"] for a in sub["attributes"]}
    assert named["ways.launched_by.tool_call_id"] == {"stringValue": "toolu_a"}


@pytest.mark.parametrize(
    "ts",
    [
        "2026-12-02T18:00:00.000Z", "2026-12-02T18:00:00.1Z", "2026-12-02T18:00:59.123456789123Z",
        "1970-01-01T00:00:00.000Z", "2026-12-02T18:00:00Z", "2026-12-02T18:00:00.000+01:00",
        "2026-12-02t18:00:00.000Z", "2026-12-02 18:00:00.000Z", "2026-12-02T18:00:00.00\u0663Z",
        "\uff12026-12-02T18:00:00.000Z", " 2026-12-02T18:00:00.000Z", "2026-12-02T18:0a:00.000Z",
        "2026-12-02T18:00:00.-1Z", "x" * 30, None, 5,
    ],
)  # fmt: skip
def test_a_span_s_time_is_events_unix_nano_s_whatever_the_form(ts):
    """The spans' fast path for the records' own form of time gives what the general
    parser gives, for that form and for every other (which it hands to the parser)."""
    from ways_sensors.state.events import unix_nano
    from ways_sensors.traces.clock import Clock

    clock = Clock()
    assert clock(ts) == clock(ts) == unix_nano(ts)
