"""The otlp target against a real loopback OTLP/HTTP receiver that decodes every request
with the official protobuf definitions; then through the real hook and dispatcher."""

from __future__ import annotations

import calendar
import gzip
import json
import time

import pytest

from ways_sensors import __version__
from ways_sensors.pipeline.stages import dumps
from ways_sensors.targets import (
    ACCEPTED,
    ERROR,
    PERMANENT,
    REFUSED,
    RETRYABLE,
    TIMEOUT,
    Context,
    Item,
)
from ways_sensors.targets import otlp as target
from ways_sensors.targets.otlp import OtlpTarget

from ..helpers import counters_of, wait_until
from ..servers import Server, decode_otlp_logs, free_port
from ..sessions import AGENT_ID, EXPECTED, PROMPT_ID, SID, TOTAL, ScriptedSession


def record(n: int, section: str = "tool_call", **over) -> dict:
    rec = {
        "schema": "ways.sensor.record/1",
        "section": section,
        "seq": 10 + n,
        "session_id": "sess-1",
        "agent": "claude-code",
        "agent_id": None,
        "agent_type": "main",
        "timestamp": f"2026-10-06T09:14:0{n}.123Z",
        "project": "/home/me/app",
        "hook_event": "PreToolUse",
        "prompt_id": "p-1",
        "data": {"tool_name": "Bash", "tool_use_id": f"toolu_{n}", "input": {"command": "ls"}},
        "sensor": "ship",
        "rule": "otel",
        "rule_seq": n,
        "chain": {"prev": "0" * 64, "hash": "a" * 64},
    }
    rec.update(over)
    return rec


def items(*recs: dict) -> list[Item]:
    return [Item(r, dumps(r)) for r in recs]


def deliver(server: Server | str, batch=None, timeout=5.0, **spec):
    endpoint = server if isinstance(server, str) else f"http://127.0.0.1:{server.port}"
    s = OtlpTarget(endpoint=spec.pop("endpoint", endpoint), **spec)
    return target.deliver(
        s, batch or items(record(1)), Context("s", "r"), time.monotonic() + timeout
    )


def attrs(kv_list) -> dict:
    """Protobuf KeyValue list -> {key: (value kind, value)}."""
    out = {}
    for kv in kv_list:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = (kind, getattr(kv.value, kind))
    return out


@pytest.fixture
def receiver():
    s = Server("otlp")
    yield s
    s.close()


def test_a_batch_is_one_request_the_official_definitions_decode(receiver):
    recs = [
        record(1),
        record(2, "tool_result", hook_event="PostToolUseFailure", data={"status": "failure"}),
        record(3, "subagent", agent_id="ag-7", agent_type="Explore", data={"phase": "stop"}),
    ]
    recs[1]["data"].update(tool_name="Bash", tool_use_id="toolu_2", error="boom")
    out = deliver(receiver, items(*recs))
    assert (out.status, out.rejected) == (ACCEPTED, 0)
    assert receiver.errors == [] and receiver.paths == ["/v1/logs"]
    assert receiver.headers[0]["content-type"] == "application/json"
    [req] = receiver.requests
    [rl] = req.resource_logs
    res = attrs(rl.resource.attributes)
    assert res["service.name"] == ("string_value", "ways-sensors")
    assert res["service.version"] == ("string_value", __version__)
    assert res["host.name"][0] == "string_value" and res["host.name"][1]
    assert res["ways.agent.name"] == ("string_value", "claude-code")
    [sl] = rl.scope_logs
    assert (sl.scope.name, sl.scope.version) == ("ways-sensors", __version__)
    logs = list(sl.log_records)
    assert len(logs) == 3
    first = logs[0]
    when = calendar.timegm((2026, 10, 6, 9, 14, 1, 0, 0, 0)) * 10**9 + 123_000_000
    assert first.time_unix_nano == when
    assert abs(first.observed_time_unix_nano - time.time_ns()) < 60 * 10**9
    assert (first.severity_number, first.severity_text) == (9, "INFO")
    assert first.event_name == "ways.sensor.tool_call"
    assert first.body.WhichOneof("value") == "string_value"
    assert json.loads(first.body.string_value) == recs[0]  # the chain travels in the body
    assert first.body.string_value == json.dumps(recs[0], sort_keys=True, separators=(",", ":"))
    a = attrs(first.attributes)
    assert a == {
        "session.id": ("string_value", "sess-1"),
        "gen_ai.conversation.id": ("string_value", "sess-1"),
        "prompt.id": ("string_value", "p-1"),
        "gen_ai.tool.name": ("string_value", "Bash"),
        "gen_ai.tool.call.id": ("string_value", "toolu_1"),
        "ways.agent.name": ("string_value", "claude-code"),
        "ways.sensor": ("string_value", "ship"),
        "ways.rule": ("string_value", "otel"),
        "ways.rule_seq": ("int_value", 1),
        "ways.seq": ("int_value", 11),
        "ways.section": ("string_value", "tool_call"),
        "ways.hook_event": ("string_value", "PreToolUse"),
    }
    # in the JSON itself, 64-bit integers are decimal strings (the OTLP/JSON mapping)
    raw = receiver.bodies[0]["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert raw["timeUnixNano"] == str(when) and isinstance(raw["observedTimeUnixNano"], str)
    seq = next(x for x in raw["attributes"] if x["key"] == "ways.rule_seq")
    assert seq["value"] == {"intValue": "1"}
    # a failed result: syslog's notice, OpenTelemetry's INFO2 (formats/severity.py)
    assert (logs[1].severity_number, logs[1].severity_text) == (10, "INFO2")
    sub = attrs(logs[2].attributes)
    assert sub["gen_ai.agent.id"] == ("string_value", "ag-7")
    assert sub["gen_ai.agent.name"] == ("string_value", "Explore")
    assert "gen_ai.tool.name" not in sub and "gen_ai.agent.id" not in a


def test_the_receiver_refuses_snake_case_keys_that_protobuf_alone_accepts():
    body = json.dumps({"resource_logs": [{"scope_logs": []}]}).encode()
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    json_format.Parse(body, ExportLogsServiceRequest())  # protobuf takes it
    with pytest.raises(ValueError, match="lowerCamelCase"):
        decode_otlp_logs({}, body)


def test_endpoint_path_gzip_resource_and_env_headers(receiver, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_OTLP_TOKEN", "t0ken")
    base = f"http://127.0.0.1:{receiver.port}"
    assert deliver(receiver, endpoint=base + "/").accepted
    assert deliver(receiver, endpoint=base + "/v1/logs").accepted  # used as is
    assert deliver(receiver, endpoint=base + "/otlp").accepted
    out = deliver(
        receiver,
        compression="gzip",
        headers={"Authorization": "Bearer ${WAYS_TEST_OTLP_TOKEN}"},
        resource={"service.name": "audit-pipeline", "deployment.environment": "ci"},
    )
    assert out.accepted and receiver.errors == []
    assert receiver.paths == ["/v1/logs", "/v1/logs", "/otlp/v1/logs", "/v1/logs"]
    h = receiver.headers[-1]
    assert h["content-encoding"] == "gzip" and h["authorization"] == "Bearer t0ken"
    assert receiver.raw[-1][:2] == b"\x1f\x8b"
    res = attrs(receiver.requests[-1].resource_logs[0].resource.attributes)
    assert res["service.name"] == ("string_value", "audit-pipeline")
    assert res["deployment.environment"] == ("string_value", "ci")


def test_unset_header_variable_is_retryable_and_sends_nothing(receiver):
    out = deliver(receiver, headers={"X-Key": "${WAYS_SURELY_UNSET_OTLP}"})
    assert (out.status, out.cause) == (RETRYABLE, ERROR) and "WAYS_SURELY_UNSET_OTLP" in out.detail
    assert receiver.attempts == []


@pytest.mark.parametrize("count", ["2", 2])
def test_partial_success_is_accepted_with_the_rejected_count(count):
    answer = json.dumps(
        {"partialSuccess": {"rejectedLogRecords": count, "errorMessage": "too old"}}
    ).encode()
    server = Server("otlp", script=[(200, {}, answer)])
    try:
        out = deliver(server, items(record(1), record(2), record(3)))
        assert (out.status, out.rejected) == (ACCEPTED, 2)
        assert "2 rejected" in out.detail and len(server.attempts) == 1
    finally:
        server.close()


@pytest.mark.parametrize(
    "answer", [b"", b"{}", b'{"partialSuccess":{}}', b'{"partialSuccess":{"errorMessage":"w"}}']
)
def test_a_plain_or_warning_only_answer_is_a_whole_acceptance(answer):
    server = Server("otlp", script=[(200, {}, answer)])
    try:
        out = deliver(server)
        assert (out.status, out.rejected) == (ACCEPTED, 0)
    finally:
        server.close()


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_retryable_statuses_honour_retry_after(status):
    server = Server("otlp", script=[(status, {"Retry-After": "7"})])
    try:
        out = deliver(server)
        assert (out.status, out.cause, out.detail) == (RETRYABLE, REFUSED, f"HTTP {status}")
        assert out.retry_after == 7.0
    finally:
        server.close()


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_credential_is_retried_with_the_backoff(status):
    server = Server("otlp", script=[(status, {"Retry-After": "7"})])
    try:
        out = deliver(server)
        assert (out.status, out.cause) == (RETRYABLE, REFUSED)
        assert out.detail == f"HTTP {status}: credentials refused"
        assert out.retry_after is None  # the backoff decides, not the header
    finally:
        server.close()


@pytest.mark.parametrize("status", [400, 404, 408, 413, 500, 501, 301])
def test_every_other_status_is_permanent(status):
    server = Server("otlp", script=[(status, {"Retry-After": "7"})])
    try:
        out = deliver(server)
        assert (out.status, out.cause) == (PERMANENT, REFUSED)
        assert out.detail.startswith(f"HTTP {status}") and out.retry_after is None
    finally:
        server.close()


def test_a_hung_receiver_is_cut_at_the_deadline():
    server = Server("hang")
    try:
        t = time.monotonic()
        out = deliver(server, timeout=1.0)
        assert (out.status, out.cause) == (RETRYABLE, TIMEOUT)
        assert time.monotonic() - t < 10
    finally:
        server.close()


def test_nobody_listening_is_a_retryable_error():
    out = deliver(f"http://127.0.0.1:{free_port()}")
    assert (out.status, out.cause) == (RETRYABLE, ERROR)


def test_a_huge_answer_is_read_only_up_to_the_cap():
    server = Server("flood")
    try:
        out = deliver(server, timeout=60)
        assert out.status == ACCEPTED
        time.sleep(0.5)
        assert server.sent < Server.FLOOD // 16
    finally:
        server.close()


def test_a_lone_surrogate_still_makes_a_request_the_receiver_decodes(receiver):
    rec = record(1, data={"tool_name": "Ba\udc80sh", "input": {"command": "echo \ud800"}})
    assert deliver(receiver, items(rec)).accepted
    assert receiver.errors == []
    [lr] = receiver.requests[0].resource_logs[0].scope_logs[0].log_records
    assert json.loads(lr.body.string_value) == rec  # the body still parses to the record
    assert attrs(lr.attributes)["gen_ai.tool.name"] == ("string_value", "Ba?sh")


def test_describes_itself():
    remote = OtlpTarget(endpoint="https://otel.example.com:4318")
    assert target.destination(remote) == "otlp https://otel.example.com:4318/v1/logs"
    assert target.off_machine(remote)
    assert not target.off_machine(OtlpTarget(endpoint="http://localhost:4318"))


# --- through the real hook and the detached dispatcher ----------------------------------


def otlp_sensor(install, server: Server, **rule) -> None:
    rule.setdefault("timeout", "2s")
    extra = "".join(f"            {k}: {v}\n" for k, v in rule.items())
    install.sensor(
        "ship",
        f"""\
        rules:
          otel:
            sections: [{", ".join(EXPECTED)}]
            delivery: at_least_once
            chain: true
            dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}'}}}}
{extra}""",
    )


def log_records(server: Server, checkpoints: bool = False) -> list:
    """The log records received; a chained rule's signed checkpoints (one log record per
    batch, evidence/sealer.py) only with `checkpoints`."""
    return [
        lr
        for req in server.requests
        for rl in req.resource_logs
        for sl in rl.scope_logs
        for lr in sl.log_records
        if checkpoints or lr.event_name != "ways.sensor.checkpoint"
    ]


def with_records(server: Server) -> list:
    """The attempts that carried a section record, not only a signed checkpoint."""
    return [
        a
        for a in server.attempts
        if any(
            lr.get("eventName") != "ways.sensor.checkpoint"
            for rl in a[2]["resourceLogs"]
            for sl in rl["scopeLogs"]
            for lr in sl["logRecords"]
        )
    ]


def events(install) -> list[dict]:
    path = install.state_root / "events.log"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_session_reaches_the_receiver_and_its_bodies_verify(install, tmp_path):
    server = Server("otlp")
    try:
        otlp_sensor(install, server)
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: len(log_records(server)) == TOTAL, timeout=60)
        assert server.errors == []
        logs = log_records(server)
        sections = [lr.event_name.removeprefix("ways.sensor.") for lr in logs]
        assert {s: sections.count(s) for s in EXPECTED} == EXPECTED
        by = [attrs(lr.attributes) for lr in logs]
        assert all(a["session.id"] == ("string_value", SID) for a in by)
        assert [a["ways.rule_seq"] for a in by] == [("int_value", i) for i in range(1, TOTAL + 1)]
        calls = [a for a in by if a["ways.section"][1] == "tool_call"]
        assert calls[0]["gen_ai.tool.name"] == ("string_value", "Bash")
        assert calls[0]["prompt.id"] == ("string_value", PROMPT_ID)
        assert calls[1]["gen_ai.agent.id"] == ("string_value", AGENT_ID)
        assert calls[1]["gen_ai.agent.name"] == ("string_value", "Explore")
        warn = [lr for lr in logs if lr.severity_text == "INFO2"]  # notice: a failure
        assert (
            len(warn) == 1 and json.loads(warn[0].body.string_value)["data"]["status"] == "failure"
        )
        # the tree's end may leave in a later request than the session's last record
        assert wait_until(
            lambda: (
                log_records(server, checkpoints=True)[-1].event_name == "ways.sensor.checkpoint"
            )  # in-band, last
        )
        everything = log_records(server, checkpoints=True)
        # the bodies are the records: a consumer can write them out and verify the chain
        out = tmp_path / "from-collector.jsonl"
        out.write_text("".join(lr.body.string_value + "\n" for lr in everything))
        r = install.ways("sensors", "verify", str(out))
        assert r.returncode == 0, r.stdout + r.stderr
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == TOTAL)
    finally:
        server.close()


def test_partial_success_is_counted_rejected_and_never_retried(install, tmp_path):
    answer = b'{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"schema"}}'
    server = Server("otlp", script=[(200, {}, answer)])
    try:
        otlp_sensor(install, server, batch="{max_records: 1}")  # batches: tests/test_batching.py
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == TOTAL - 1)
        c = counters_of(install, "ship/otel")
        assert (c["rejected"], c["refusals"]) == (1, 0)
        # a loaded machine may time an attempt out and send it again (counted as a
        # timeout); nothing else is retried, the partial success least of all
        timeouts = c.get("timeouts", 0)
        assert c.get("retries", 0) == timeouts
        # one request per record otherwise (a checkpoint may come alone: the tree's end,
        # or one due after a quiet spell, evidence/cadence.py)
        assert len(with_records(server)) == TOTAL + timeouts
        assert not (install.state_root / "deadletters" / "ship.otel.jsonl").exists()
        [partial] = [e for e in events(install) if e["kind"] == "dispatch.partial"]
        assert (partial["rejected"], partial["rule_seq"]) == (1, 1)
    finally:
        server.close()


def test_429_and_503_with_retry_after_are_retried_after_that_wait(install, tmp_path):
    server = Server("otlp", script=[(429, {"Retry-After": "1"}), (503, {"Retry-After": "1"})])
    try:
        otlp_sensor(install, server, batch="{max_records: 1}")
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == TOTAL)
        (t1, s1, _), (t2, s2, _), (t3, s3, _) = server.attempts[:3]
        assert (s1, s2, s3) == (429, 503, 200)
        assert t2 - t1 >= 0.8 and t3 - t2 >= 0.8  # the backoff alone: 0.25 s, then 0.5 s
        c = counters_of(install, "ship/otel")
        assert (c["retries"], c["refusals"], c["rejected"]) == (2, 2, 0)
        refused = [e for e in events(install) if e["kind"] == "dispatch.refused"]
        assert [e["retry_after"] for e in refused] == [1.0, 1.0]
        assert [e["rule_seq"] for e in refused] == [1, 1]  # the same record, sent again
    finally:
        server.close()


def test_400_is_parked_and_the_rule_moves_on(install, tmp_path):
    # the batch (the record and its checkpoint), then the record alone: refused both times
    server = Server("otlp", script=[(400, {}), (400, {})])
    try:
        otlp_sensor(install, server, batch="{max_records: 1}")
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == TOTAL - 1)
        c = counters_of(install, "ship/otel")
        assert (c["rejected"], c["retries"]) == (1, 0)
        parked = install.state_root / "deadletters" / "ship.otel.jsonl"
        [line] = parked.read_text().splitlines()
        assert json.loads(line)["record"]["rule_seq"] == 1
        assert json.loads(line)["reason"] == "HTTP 400"
    finally:
        server.close()


def test_a_hung_receiver_times_out_and_the_record_is_sent_again(install, tmp_path):
    server = Server("otlp", script=[(None, {})])  # the first request never gets an answer
    try:
        otlp_sensor(install, server, timeout="1s", batch="{max_records: 1}")
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == TOTAL)
        c = counters_of(install, "ship/otel")
        # the hung request times out; on a loaded machine a slow answer may too: each
        # timeout is one retry, counted and logged, and nothing is refused
        assert c["timeouts"] >= 1 and c["retries"] == c["timeouts"] and c["rejected"] == 0
        first, again = server.attempts[0][2], server.attempts[1][2]
        assert (
            first["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["body"]
            == (again["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["body"])
        )
        assert [e["kind"] for e in events(install)].count("dispatch.timeout") == c["timeouts"]
    finally:
        server.close()


def test_gzip_through_the_dispatcher(install, tmp_path):
    server = Server("otlp")
    try:
        otlp_sensor(install, server)
        install.sensor(
            "ship",
            (install.user_sensors / "ship.yaml")
            .read_text()
            .replace("'}}", "', compression: gzip}}"),
        )
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: len(log_records(server)) == TOTAL, timeout=60)
        assert all(gzip.decompress(r) for r in server.raw) and server.errors == []
    finally:
        server.close()


@pytest.mark.parametrize(
    ("agent", "fixture", "argv_event"),
    [("codex", "CODEX", False), ("gemini", "GEMINI", False), ("cursor", "CURSOR", False),
     ("copilot", "COPILOT", True)],
)  # fmt: skip
def test_the_resource_names_the_real_agent(install, agent, fixture, argv_event):
    """A recorded session of each agent through its wired hook and the real dispatcher:
    the OTLP resource (and each log record) names that agent, not claude-code."""
    from ..agents import fixtures

    fx = fixtures.load(getattr(fixtures, fixture))
    server = Server("otlp")
    try:
        install.sensor(
            "ship",
            "rules:\n  otel:\n    sections: [session_start, user_prompt, tool_call, "
            "tool_result, assistant_response, session_end]\n"
            f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}'}}}}\n",
        )
        fixtures.replay(install, fx, agent, argv_event=argv_event)
        fixtures.dispatch(install, fx.session_id)
        assert server.errors == [] and log_records(server)
        for req in server.requests:
            for rl in req.resource_logs:
                assert attrs(rl.resource.attributes)["ways.agent.name"] == ("string_value", agent)
                for sl in rl.scope_logs:
                    for lr in sl.log_records:
                        assert attrs(lr.attributes)["ways.agent.name"] == ("string_value", agent)
    finally:
        server.close()
