"""A real Claude Code session (the harness's six turns: a secret, parallel calls, a
subagent, a failing command, a compaction, a plain turn; each a `claude -p` run of one
session) into a real Arize Phoenix server, read back through Phoenix's own REST API:
one trace, one root, one `chat` span per reply with its tokens and cost, one
`execute_tool` span per tool call with the failing one in error, the subagent nested
under its Agent call, each resumed run under the root.

The client runs as under a CI job's trace: started with a TRACEPARENT and its own
tracing on (its spans to the same Phoenix), so it hands every hook a TRACEPARENT: our
spans join that trace, our root under the job's span, beside the client's own spans."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from ways_sensors.traces import ids

from . import harness
from .phoenix import Phoenix, attrs

pytestmark = pytest.mark.slow
STATUS_ERROR = 2
JOB_TRACE, JOB_SPAN = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    root = tmp_path_factory.mktemp("phoenix-e2e")
    server = Phoenix(root / "phoenix")
    try:
        s = harness.prepare(root / "client")
        server.sensor(s.root, harness.SECTIONS)
        tracing = {  # the client's own tracing (its OpenTelemetry traces beta), to Phoenix
            "TRACEPARENT": f"00-{JOB_TRACE}-{JOB_SPAN}-01",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": server.url,
            "DISABLE_TELEMETRY": None,
        }
        harness.run(s, env_extra=tracing)
        records = s.records()
        want = sum(r["section"] in ("assistant_response", "tool_result") for r in records)
        end = time.monotonic() + 120
        spans: list[dict] = []
        while time.monotonic() < end:  # Phoenix inserts what it received in the background
            spans = [x for x in server.spans() if x["trace_id"] == JOB_TRACE]
            names = Counter(x["name"].split(" ")[0] for x in ours(spans))
            if names["chat"] + names["execute_tool"] >= want and any(
                x["span_id"] == ids.span_id(s.session_id, "root") for x in spans
            ):
                break
            time.sleep(1)
        yield s, records, spans
    finally:
        server.stop()


def of(records, section):
    return [r for r in records if r["section"] == section]


def ours(spans: list[dict]) -> list[dict]:
    """Our spans (each names its record: `ways.rule_seq`), not the client's own."""
    return [x for x in spans if "ways.rule_seq" in attrs(x)]


def test_the_session_joined_the_clients_trace(traced):
    s, records, spans = traced
    assert {r.get("traceparent", "")[3:35] for r in records} == {JOB_TRACE}  # every record
    mine = ours(spans)
    theirs = [x for x in spans if x not in mine]
    assert mine and theirs  # ours and the client's own spans, in one trace
    [root] = [x for x in mine if x["span_id"] == ids.span_id(s.session_id, "root")]
    assert root["parent_span_id"] == JOB_SPAN  # under the job's span


def test_the_session_is_one_trace_with_one_root_and_a_run_per_resume_beside_it(traced):
    s, _, spans = traced
    spans = ours(spans)
    assert spans, "Phoenix holds no span of the session"
    assert {x["trace_id"] for x in spans} == {JOB_TRACE}
    assert len({x["span_id"] for x in spans}) == len(spans)  # no span twice
    [root] = [x for x in spans if x["span_id"] == ids.span_id(s.session_id, "root")]
    assert root["name"] == "invoke_agent claude-code" and root["parent_span_id"] == JOB_SPAN
    a = attrs(root)
    assert (a["gen_ai.operation.name"], a["gen_ai.conversation.id"]) == (
        "invoke_agent",
        s.session_id,
    )
    resumed = [t for t in s.truth() if t.get("hook_event_name") == "SessionStart"
               and t.get("source") == "resume"]  # fmt: skip
    runs = [x for x in spans if x["name"] == "invoke_agent claude-code" and x is not root]
    assert len(runs) == len(resumed) == len(harness.PROMPTS) - 1
    # each run under the job's span beside the root, which ended with the first run
    assert {x["parent_span_id"] for x in runs} == {JOB_SPAN}
    tops = {x["span_id"] for x in [root, *runs]}
    by_id = {x["span_id"]: x for x in spans}
    for x in spans:  # one tree per run, and no span ends after its parent
        if x["span_id"] not in tops:
            up = by_id[x["parent_span_id"]]
            assert int(x["end_time_unix_nano"]) <= int(up["end_time_unix_nano"])


def test_one_chat_span_per_reply_with_its_tokens_and_cost(traced):
    s, records, spans = traced
    spans = ours(spans)
    chats = {x["span_id"]: x for x in spans if x["name"].startswith("chat")}
    replies = of(records, "assistant_response")
    assert len(chats) == len(replies)
    priced = 0
    for r in replies:
        span = chats[ids.span_id(s.session_id, "chat", str(r["seq"]))]
        a = attrs(span)
        usage = r["data"].get("usage")
        if not usage:  # Claude Code keeps no file for its compaction agent: no tokens
            assert "gen_ai.usage.input_tokens" not in a
            continue
        cached = usage.get("cache_read_input_tokens", 0) + usage.get(
            "cache_creation_input_tokens", 0
        )
        assert a["gen_ai.usage.input_tokens"] == usage["input_tokens"] + cached
        assert a["gen_ai.usage.output_tokens"] == usage["output_tokens"]
        assert span["name"] == f"chat {r['data']['model']}"
        if "cost" in usage:
            assert a["ways.cost.amount"] == pytest.approx(usage["cost"]["amount"])
            assert a["ways.cost.currency"] == "USD"
            priced += 1
    assert priced >= 1


def test_one_execute_tool_span_per_call_and_the_failing_one_in_error(traced):
    _, records, spans = traced
    spans = ours(spans)
    tools = {
        attrs(x)["gen_ai.tool.call.id"]: x for x in spans if x["name"].startswith("execute_tool")
    }
    calls = {r["data"]["tool_use_id"]: r for r in of(records, "tool_call")}
    assert set(tools) == set(calls)
    results = {r["data"]["tool_use_id"]: r["data"]["status"] for r in of(records, "tool_result")}
    failed = {t for t, status in results.items() if status == "failure"}
    assert len(failed) == 1
    for tid, span in tools.items():
        assert span["name"] == f"execute_tool {calls[tid]['data']['tool_name']}"
        in_error = span["status"]["code"] == STATUS_ERROR
        assert in_error == (tid in failed), tid
        if in_error:
            assert attrs(span)["error.type"] == "tool_error"


def test_the_subagent_names_its_agent_call_and_ends_within_its_parent(traced):
    s, records, spans = traced
    spans = ours(spans)
    [start] = [r for r in of(records, "subagent") if r["data"]["phase"] == "start"
               and r["agent_type"] == "general-purpose"]  # fmt: skip
    aid = start["data"]["agent_id"]
    [sub] = [x for x in spans if x["span_id"] == ids.span_id(s.session_id, "agent", aid)]
    assert sub["name"] == "invoke_agent general-purpose"
    parent = next(x for x in spans if x["span_id"] == sub["parent_span_id"])
    assert int(sub["end_time_unix_nano"]) <= int(parent["end_time_unix_nano"])
    if parent["name"].startswith("execute_tool "):  # a subagent its call waited for
        spawner = parent
    else:  # an async one: its call returned first, naming it; under the run's agent span
        assert parent["name"] == "invoke_agent claude-code"
        call = attrs(sub)["ways.launched_by.tool_call_id"]
        spawner = next(x for x in spans if x["span_id"] == ids.span_id(s.session_id, "tool", call))
    assert attrs(spawner)["gen_ai.tool.name"] in ("Agent", "Task")
    inside = [r["data"]["tool_use_id"] for r in of(records, "tool_call") if r["agent_id"] == aid]
    assert inside  # the subagent ran its own Bash call: under the subagent's span
    for tid in inside:
        span = next(x for x in spans if x["span_id"] == ids.span_id(s.session_id, "tool", tid))
        assert span["parent_span_id"] == sub["span_id"]


def test_the_compaction_is_a_span_event(traced):
    _, records, spans = traced
    spans = ours(spans)
    assert of(records, "compaction")
    names = [e["name"] for x in spans for e in x.get("events") or []]
    assert names.count("ways.compaction") == len(of(records, "compaction"))
