"""Joining the client's trace: the hook, run as the client runs it with TRACEPARENT in its
environment, spools it; the real dispatcher stamps the session's records; every span at
a loopback traces receiver and every log record at a loopback logs receiver (both
decoding with the official protobuf definitions) carries the client's trace id."""

from __future__ import annotations

import json

import pytest

from ways_sensors.state import spool
from ways_sensors.traces import context
from ways_sensors.traces import ids as spans

from ..conftest import ALL_SECTIONS
from ..helpers import dispatcher_lock, wait_until
from ..servers import Server
from ..sessions import EXPECTED, SID, TOTAL, ScriptedSession

TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_A = "00f067aa0ba902b7"
TRACE_B = (
    "0af7651916cd43dd8448eb211c80319c"  # a later prompt's trace (the client starts one per prompt)
)
SPAN_B = "b7ad6b7169203331"


class ClientSession(ScriptedSession):
    """The scripted session, its hooks run with the TRACEPARENT the client gives them:
    none at the session's start (no span is active yet), the first prompt's trace for
    the first turn, the second prompt's after the compaction."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.traceparent: str | None = None

    def hook(self, event: str, **fields) -> None:
        if event == "UserPromptSubmit":
            first = self.traceparent is None
            self.traceparent = f"00-{TRACE_A}-{SPAN_A}-01" if first else f"00-{TRACE_B}-{SPAN_B}-01"
        env = self.install.env
        env.pop("TRACEPARENT", None)
        if self.traceparent:
            env["TRACEPARENT"] = self.traceparent
        super().hook(event, **fields)


@pytest.fixture
def receivers():
    logs, traces = Server("otlp"), Server("otlp-traces")
    yield logs, traces
    logs.close()
    traces.close()


def both_signals(install, logs: Server, traces: Server) -> None:
    sections = ", ".join(ALL_SECTIONS)
    install.sensor(
        "joined",
        "rules:\n"
        "  spans:\n"
        f"    sections: [{sections}]\n"
        "    delivery: at_least_once\n"
        "    chain: true\n"
        f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{traces.port}', signal: traces}}}}\n"
        "  logs:\n"
        f"    sections: [{sections}]\n"
        "    delivery: at_least_once\n"
        f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{logs.port}'}}}}\n",
    )


def all_spans(receiver: Server) -> list:
    return [s for r in receiver.requests for rs in r.resource_spans for ss in rs.scope_spans
            for s in ss.spans]  # fmt: skip


def all_logs(receiver: Server) -> list:
    return [x for r in receiver.requests for rl in r.resource_logs for sl in rl.scope_logs
            for x in sl.log_records]  # fmt: skip


def test_spans_and_log_records_join_the_clients_trace(install, receivers, tmp_path):
    logs, traces = receivers
    both_signals(install, logs, traces)
    ClientSession(install, tmp_path / "t").play()
    assert wait_until(lambda: len(all_logs(logs)) >= TOTAL), (logs.errors, len(all_logs(logs)))
    assert wait_until(lambda: any(s.name == "invoke_agent claude-code" for s in all_spans(traces)))
    assert logs.errors == [] and traces.errors == []

    # the spool frames carry what each hook's environment held
    got = all_spans(traces)
    assert {s.trace_id.hex() for s in got} == {TRACE_A}  # the first prompt's trace, throughout
    [root] = [s for s in got if s.name == "invoke_agent claude-code"]
    assert root.parent_span_id.hex() == SPAN_A  # under the client's span
    assert root.span_id.hex() == spans.span_id(SID, "root")  # our ids stay ours
    others = [s for s in got if s is not root]
    assert others and all(s.parent_span_id.hex() != SPAN_A for s in others)

    records = [json.loads(x.body.string_value) for x in all_logs(logs)]
    by_seq = {r["seq"]: (r, x) for r, x in zip(records, all_logs(logs), strict=True)}
    assert len(by_seq) == TOTAL
    start, start_log = by_seq[1]
    assert start["section"] == "session_start" and "traceparent" not in start
    assert start_log.trace_id.hex() == spans.trace_id(SID)  # before the join: the session's own
    for seq, (rec, log) in by_seq.items():
        if seq == 1:
            continue
        assert rec["traceparent"] == f"00-{TRACE_A}-{SPAN_A}-01", rec["section"]
        assert log.trace_id.hex() == TRACE_A, rec["section"]
        assert len(log.span_id) == 8
    # a log record names the span it is part of: a tool result its call's, a reply its chat
    result = next(x for r, x in by_seq.values() if r["section"] == "tool_result")
    assert result.span_id.hex() == spans.span_id(SID, "tool", "toolu_01Known")
    chat_ids = {s.span_id.hex() for s in got if s.name.startswith("chat")}
    reply_logs = {
        x.span_id.hex() for r, x in by_seq.values() if r["section"] == "assistant_response"
    }
    assert len(reply_logs) == EXPECTED["assistant_response"] and reply_logs == chat_ids

    joined = (install.state_root / "events.log").read_text()
    assert '"dispatch.trace_joined"' in joined


def test_a_malformed_traceparent_is_refused_logged_and_the_session_keeps_its_own_trace(
    install, receivers, tmp_path
):
    logs, traces = receivers
    both_signals(install, logs, traces)
    install.env["TRACEPARENT"] = f"00-{TRACE_A.upper()}-{SPAN_A}-01"  # W3C wants lowercase
    ScriptedSession(install, tmp_path / "t").play()
    assert wait_until(lambda: any(s.name == "invoke_agent claude-code" for s in all_spans(traces)))
    assert wait_until(lambda: len(all_logs(logs)) >= TOTAL)
    assert {s.trace_id.hex() for s in all_spans(traces)} == {spans.trace_id(SID)}
    assert {x.trace_id.hex() for x in all_logs(logs)} == {spans.trace_id(SID)}
    [root] = [s for s in all_spans(traces) if s.name == "invoke_agent claude-code"]
    assert root.parent_span_id == b""
    for x in all_logs(logs):
        assert "traceparent" not in json.loads(x.body.string_value)
    log = (install.state_root / "events.log").read_text()
    assert '"dispatch.bad_traceparent"' in log and TRACE_A.upper() not in log  # content-free


def test_the_hook_spools_the_environments_traceparent_only_when_there_is_one(install):
    out = install.root / "out.jsonl"
    install.sensor("s", f"rules:\n  r:\n    sections: [tool_call]\n"
                        f"    dispatch: {{file: {{path: '{out}'}}}}\n")  # fmt: skip
    payload = {"session_id": "tp-1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_use_id": "t1", "tool_input": {}, "cwd": str(install.project)}  # fmt: skip
    with dispatcher_lock(install, "tp-1"):  # the frames stay in the spool for us to read
        assert install.hook(payload).returncode == 0
        install.env["TRACEPARENT"] = f"00-{TRACE_B}-{SPAN_B}-01"
        assert install.hook(payload).returncode == 0
        install.env["TRACEPARENT"] = "x" * 10_000  # bounded: the dispatcher refuses it
        assert install.hook(payload).returncode == 0
        entries = spool.read_all("tp-1", install.layout)
    assert [e.traceparent for e in entries] == ["", f"00-{TRACE_B}-{SPAN_B}-01", "x" * 256]


@pytest.mark.parametrize(
    "value, parsed",
    [
        (f"00-{TRACE_A}-{SPAN_A}-01", (TRACE_A, SPAN_A)),
        (f"00-{TRACE_A}-{SPAN_A}-00", (TRACE_A, SPAN_A)),  # not sampled: still the trace
        (f"01-{TRACE_A}-{SPAN_A}-01-later-fields", (TRACE_A, SPAN_A)),  # a later version
        (f"00-{TRACE_A}-{SPAN_A}-01-x", None),  # version 00 has exactly four fields
        (f"ff-{TRACE_A}-{SPAN_A}-01", None),
        (f"00-{'0' * 32}-{SPAN_A}-01", None),
        (f"00-{TRACE_A}-{'0' * 16}-01", None),
        (f"00-{TRACE_A.upper()}-{SPAN_A}-01", None),
        (f"00_{TRACE_A}-{SPAN_A}-01", None),
        ("", None),
        (None, None),
    ],
)
def test_traceparent_is_read_as_the_w3c_specification_says(value, parsed):
    assert context.parse(value) == parsed


def test_a_resumed_session_is_a_run_beside_the_root_in_the_same_trace(install, receivers, tmp_path):
    """`claude --resume`: a new client process, a new dispatcher (the first one left with
    the session's end and its folder went), its hooks under another trace: the run is
    one `invoke_agent` span in the trace the session joined first, under the client's
    span beside the root (which ended with the first run: spans.py)."""
    logs, traces = receivers
    both_signals(install, logs, traces)
    first = ClientSession(install, tmp_path / "t")
    first.play()
    root_id = spans.span_id(SID, "root")
    assert wait_until(lambda: any(s.span_id.hex() == root_id for s in all_spans(traces)))
    assert wait_until(lambda: not (install.sessions() / SID).exists())  # the folder went
    install.env["TRACEPARENT"] = f"00-{TRACE_B}-{SPAN_B}-01"
    again = ScriptedSession(install, tmp_path / "t")
    again.transcript.write_text(first.transcript.read_text())
    again.n = first.n
    again.hook("SessionStart", source="resume", model="claude-test-1")
    again.user("and once more")
    again.hook("UserPromptSubmit", prompt="and once more", prompt_id="p-resumed")
    again.assistant("resumed reply", "msg_9", stop_reason="end_turn")
    again.hook("Stop", last_assistant_message="resumed reply", stop_hook_active=False)
    again.hook("SessionEnd", reason="other")
    assert wait_until(
        lambda: sum(s.name == "invoke_agent claude-code" for s in all_spans(traces)) == 2
    )
    assert traces.errors == []
    got = all_spans(traces)
    assert {s.trace_id.hex() for s in got} == {TRACE_A}  # the ledger kept the joined trace
    roots = [s for s in got if s.span_id.hex() == root_id]
    assert len(roots) == 1  # the root is never sent twice (it would differ: its end)
    [run] = [s for s in got if s.name == "invoke_agent claude-code" and s is not roots[0]]
    assert run.parent_span_id == roots[0].parent_span_id  # the client's span
    assert run.start_time_unix_nano >= roots[0].end_time_unix_nano
    assert any(kv.key == "ways.session.resumed" for kv in run.attributes)
    [chat] = [s for s in got if s.name.startswith("chat") and "resumed reply" in str(s.attributes)]
    assert chat.parent_span_id == run.span_id
    assert len({s.span_id for s in got}) == len(got)


def _jsonl(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_blocking_rules_records_carry_the_sessions_trace_as_the_dispatchers_do(install, tmp_path):
    """The hook builds a blocking rule's records without the dispatcher's state; they
    carry the trace the session joined (traces/joined.py), not each hook's own: the
    second prompt's hook runs under another trace, and so does a resumed process."""
    blocking, others = tmp_path / "blocking.jsonl", tmp_path / "others.jsonl"
    sections = ", ".join(ALL_SECTIONS)
    install.sensor(
        "joined",
        "rules:\n"
        "  now:\n"
        "    sections: [user_prompt, tool_call]\n"
        "    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{blocking}'}}}}\n"
        "  later:\n"
        f"    sections: [{sections}]\n"
        f"    dispatch: {{file: {{path: '{others}'}}}}\n",
    )
    first = ClientSession(install, tmp_path / "t")
    first.play()
    assert wait_until(lambda: len(_jsonl(others)) >= TOTAL)
    assert wait_until(lambda: not (install.sessions() / SID).exists())  # the folder went
    session_trace = f"00-{TRACE_A}-{SPAN_A}-01"
    got = _jsonl(blocking)
    assert [r["section"] for r in got] == ["user_prompt", "tool_call", "tool_call", "user_prompt"]
    assert {r.get("traceparent") for r in got} == {session_trace}  # the second prompt's too
    later = [r for r in _jsonl(others) if r["seq"] > 1]
    assert {r.get("traceparent") for r in later} == {session_trace}
    # the same record, built by the hook and by the dispatcher, apart from seq and the rule
    rule_fields = ("seq", "rule", "rule_seq", "sensor")
    same = {k: v for k, v in got[0].items() if k not in rule_fields}
    [dispatched] = [r for r in later if r["section"] == "user_prompt" and r["data"] == same["data"]]
    assert {k: v for k, v in dispatched.items() if k not in rule_fields} == same

    # a resumed process (its folder went; the ledger kept the trace) under another trace
    install.env["TRACEPARENT"] = f"00-{TRACE_B}-{SPAN_B}-01"
    again = ScriptedSession(install, tmp_path / "t")
    again.transcript.write_text(first.transcript.read_text())
    again.n = first.n
    again.hook("UserPromptSubmit", prompt="and once more", prompt_id="p-resumed")
    resumed = _jsonl(blocking)[-1]
    assert resumed["data"]["prompt"] == "and once more"
    assert resumed["traceparent"] == session_trace
    trace_file = install.sessions() / SID / "trace.json"  # the resumed dispatcher's
    assert wait_until(trace_file.exists)
    assert json.loads(trace_file.read_text()) == {"traceparent": session_trace}
    assert trace_file.stat().st_mode & 0o777 == 0o600
