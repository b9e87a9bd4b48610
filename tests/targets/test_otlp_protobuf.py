"""`encoding: protobuf` on the otlp target: the hand-written encoder says exactly what the
JSON says (both parsed by the official opentelemetry-proto definitions and compared
byte for byte once re-serialized), a real session's spans and logs reach a loopback
receiver as `application/x-protobuf`, a protobuf partial success is counted, and the
dispatcher's code never loads a protobuf runtime."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ways_sensors.formats import otlp_logs, otlp_protobuf
from ways_sensors.targets import otlp
from ways_sensors.targets.base import ACCEPTED, Context, Item
from ways_sensors.traces import export

from ..conftest import ALL_SECTIONS
from ..helpers import wait_until
from ..servers import Server, ids_as_base64
from ..sessions import EXPECTED, TOTAL, ScriptedSession, span_records


def same(kind, request: dict) -> None:
    """The protobuf bytes and the JSON of one request parse to the same message."""
    from_json = kind()
    json_format.ParseDict(ids_as_base64(json.loads(json.dumps(request))), from_json)
    body = otlp_protobuf.encode(request)
    from_pb = kind.FromString(body)
    assert from_pb == from_json
    assert from_pb.SerializeToString(deterministic=True) == from_json.SerializeToString(
        deterministic=True
    )


def hostile_record(seq: int) -> dict:
    return {
        "schema": "ways.sensor.record/1",
        "section": "tool_result",
        "seq": seq,
        "session_id": "s-pb",
        "agent": "codex",
        "agent_id": "ag-1",
        "agent_type": "Explore",
        "timestamp": "2026-10-06T09:14:01.123Z",
        "project": "/p",
        "hook_event": "PostToolUse",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "data": {
            "tool_name": "Bash",
            "tool_use_id": "t\u00e9",
            "status": "failure",
            "error": "x\ud800y",
            "n": -5,
            "f": 1.5e300,
        },
        "sensor": "s",
        "rule": "r",
        "rule_seq": -(2**63) if seq == 2 else seq,  # the int64 edge
    }


def test_logs_in_protobuf_say_what_the_json_says():
    spec = otlp.OtlpTarget(endpoint="http://127.0.0.1:1", encoding="protobuf")
    batch = [Item(hostile_record(i), i) for i in (1, 2, 3)]
    req = otlp.request(spec, batch)
    same(ExportLogsServiceRequest, req)
    msg = ExportLogsServiceRequest.FromString(otlp.encode(spec, batch))
    log = msg.resource_logs[0].scope_logs[0].log_records[0]
    assert log.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert log.body.string_value == otlp_logs.body_of(batch[0].record)  # ASCII-escaped, whole
    # a lone surrogate elsewhere (a span attribute) cannot be UTF-8: it becomes '?'
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue

    raw = otlp_protobuf.message("KeyValue", {"key": "k", "value": {"stringValue": "x\ud800y"}})
    assert KeyValue.FromString(raw).value.string_value == "x?y"


def test_spans_in_protobuf_say_what_the_json_says():
    recs = span_records()
    recs[-1]["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    recs.insert(3, {**recs[3], "section": "permission", "data": {"phase": "request"}})
    recs[-2]["data"]["usage"] = {"input_tokens": 3, "output_tokens": 2,
                                 "cost": {"amount": 0.25, "currency": "USD"}}  # fmt: skip
    for i, r in enumerate(recs, 1):
        r["rule_seq"] = i
    req = export.request(recs, "s-resend", "tr", "spans", [], "0")
    assert req is not None
    spans = req["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert any("events" in s for s in spans) and any("parentSpanId" in s for s in spans)
    same(ExportTraceServiceRequest, req)


def test_a_key_the_encoder_does_not_know_is_an_error_not_a_silent_drop():
    with pytest.raises(ValueError, match=r"Span\.novel"):
        otlp_protobuf.encode({"resourceSpans": [{"scopeSpans": [{"spans": [{"novel": 1}]}]}]})


def test_a_protobuf_partial_success_is_read_and_a_torn_answer_is_not_trusted():
    answer = ExportTraceServiceResponse()
    answer.partial_success.rejected_spans = 2
    answer.partial_success.error_message = "two spans too old"
    assert otlp_protobuf.partial(answer.SerializeToString()) == (2, "two spans too old")
    logs = ExportLogsServiceResponse()
    logs.partial_success.rejected_log_records = 7
    assert otlp.rejected_of(logs.SerializeToString(), protobuf=True) == (7, "")
    assert otlp_protobuf.partial(answer.SerializeToString()[:-3]) == (0, "")
    assert otlp_protobuf.partial(b"") == (0, "")
    assert otlp.rejected_of(b'{"partialSuccess": {"rejectedSpans": "4"}}', protobuf=True)[0] == 4


def test_a_partial_success_over_the_wire_counts_as_rejected():
    answer = ExportLogsServiceResponse()
    answer.partial_success.rejected_log_records = 1
    server = Server("otlp", script=[(200, {}, answer.SerializeToString())])
    try:
        spec = otlp.OtlpTarget(
            endpoint=f"http://127.0.0.1:{server.port}", encoding="protobuf", compression="gzip"
        )
        out = otlp.deliver(
            spec, [Item(hostile_record(1), 1)], Context("s", "r"), time.monotonic() + 10
        )
        assert (out.status, out.rejected) == (ACCEPTED, 1)
        assert server.errors == []
        assert server.headers[0]["content-type"] == "application/x-protobuf"
        assert server.headers[0]["content-encoding"] == "gzip"
    finally:
        server.close()


def test_a_real_session_in_protobuf_spans_and_logs(install, tmp_path):
    traces, logs = Server("otlp-traces"), Server("otlp")
    try:
        sections = ", ".join(ALL_SECTIONS)
        install.sensor(
            "pb",
            "rules:\n"
            "  spans:\n"
            f"    sections: [{sections}]\n"
            "    delivery: at_least_once\n"
            "    chain: true\n"
            f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{traces.port}', "
            "signal: traces, encoding: protobuf, compression: gzip}}\n"
            "  logs:\n"
            f"    sections: [{sections}]\n"
            f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{logs.port}', "
            "encoding: protobuf}}\n",
        )
        ScriptedSession(install, tmp_path / "t").play()
        got = lambda: [s for r in traces.requests for rs in r.resource_spans  # noqa: E731
                       for ss in rs.scope_spans for s in ss.spans]  # fmt: skip
        assert wait_until(lambda: any(s.name == "invoke_agent claude-code" for s in got()))
        n_logs = lambda: sum(len(sl.log_records) for r in logs.requests  # noqa: E731
                             for rl in r.resource_logs for sl in rl.scope_logs)  # fmt: skip
        assert wait_until(lambda: n_logs() >= TOTAL)
        assert traces.errors == [] and logs.errors == []
        assert {h["content-type"] for h in traces.headers + logs.headers} == {
            "application/x-protobuf"
        }
        names = [s.name.split(" ")[0] for s in got()]
        assert names.count("chat") == EXPECTED["assistant_response"]
        assert names.count("execute_tool") == 3 and names.count("invoke_agent") == 2
        assert len({s.span_id for s in got()}) == len(got())
        assert n_logs() == TOTAL
    finally:
        traces.close()
        logs.close()


def test_the_dispatchers_code_loads_no_protobuf_runtime():
    code = (
        "import sys, json\n"
        "from ways_sensors.targets import otlp\n"
        "from ways_sensors.targets.base import Item\n"
        "spec = otlp.OtlpTarget(endpoint='http://127.0.0.1:1', encoding='protobuf')\n"
        "rec = json.loads(sys.argv[1])\n"
        "assert otlp.encode(spec, [Item(rec, 1)])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('google', 'opentelemetry')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(hostile_record(1)).replace("\\ud800", "")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "[]"
