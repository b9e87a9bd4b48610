"""The syslog target: RFC 5424 messages as built, then against a real rsyslogd on
loopback (tests/rsyslog.py) over TCP, TLS and UDP, each message parsed by rsyslog into
the fields the target's docstring promises; failures as retryable or permanent; and a
recorded real Claude Code session through the real hook and dispatcher, complete and
once, and complete again across an rsyslog killed and restarted mid-session."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path

import msgspec
import pytest

from ways_sensors.config.specdecode import decode_sensor
from ways_sensors.formats import severity
from ways_sensors.targets import (
    ACCEPTED,
    ERROR,
    PERMANENT,
    RETRYABLE,
    TIMEOUT,
    Context,
    Item,
    syslog,
)
from ways_sensors.targets.syslog import SyslogTarget

from ..conftest import TRANSCRIPT, hooks
from ..formats import samples
from ..helpers import written_by
from ..rsyslog import SD_ID, Rsyslog, make_ca

CTX = Context("s", "r")
RECORDS = samples.records()
LINES = samples.lines(RECORDS)
BATCH = [Item(r, line) for r, line in zip(RECORDS, LINES, strict=True)]
HEADER = re.compile(
    r"<(\d+)>1 (\S+) (\S+) ways (\d+) (\S+) \[ways@32473 ((?:[a-z_]+=\"(?:[^\"\\\]]|\\.)*\" ?)+)\] "
)


def send(spec, batch=BATCH, timeout=10.0):
    return syslog.deliver(spec, batch, CTX, time.monotonic() + timeout)


@pytest.fixture
def rsyslog(request, tmp_path):
    server = Rsyslog(tmp_path / "rsyslog", getattr(request, "param", "tcp"))
    yield server
    server.close()


# --- the message, as built --------------------------------------------------------------


def test_message_fields():
    spec = SyslogTarget(host="127.0.0.1")
    msg = syslog.message(spec, BATCH[4]).decode()  # a failed shell tool call
    m = HEADER.match(msg)
    assert m, msg
    pri, stamp, _host, _pid, msgid, params = m.groups()
    assert int(pri) == 16 * 8 + 5  # local0, notice
    assert stamp == RECORDS[4]["timestamp"] and msgid == "tool_result"
    assert 'rule_seq="5"' in params and f'chain_hash="{RECORDS[4]["chain"]["hash"]}"' in params
    assert msg[m.end() :].encode() == LINES[4]  # MSG: the record as json sends it, no BOM


def test_framing_is_octet_counting():
    msg = syslog.message(SyslogTarget(host="h"), BATCH[0])
    framed = syslog.frame(msg)
    length, _, rest = framed.partition(b" ")
    assert int(length) == len(rest) == len(msg) and rest == msg


def test_sd_values_are_escaped_and_header_fields_are_printable():
    rec = {**RECORDS[0], "session_id": 'a"b\\c]d', "section": "odd section é"}
    msg = syslog.message(SyslogTarget(host="h"), Item(rec, LINES[0])).decode()
    assert 'session_id="a\\"b\\\\c\\]d"' in msg
    assert " odd_section__ [" in msg  # MSGID: printable US-ASCII only


def test_severity_and_facility_follow_the_rule():
    auto = SyslogTarget(host="h", facility="auth")
    levels = [syslog.severity_of(auto, r) for r in RECORDS]
    assert levels == [severity.SYSLOG[severity.level(r)] for r in RECORDS]
    assert {3, 4, 5, 6} <= set(levels)  # error, denial and lost session, failure, ordinary
    fixed = SyslogTarget(host="h", severity="crit", facility="local7")
    assert syslog.message(fixed, BATCH[0]).startswith(b"<%d>1 " % (23 * 8 + 2))


def test_spec_checks():
    with pytest.raises(msgspec.ValidationError, match="need protocol: tls"):
        msgspec.convert({"host": "h", "ca_file": "/x"}, SyslogTarget)
    with pytest.raises(msgspec.ValidationError, match="go together"):
        msgspec.convert({"host": "h", "protocol": "tls", "cert_file": "/x"}, SyslogTarget)
    sensor = decode_sensor(
        {"rules": {"r": {"sections": ["tool_call"],
                         "dispatch": {"syslog": {"host": "siem.example.com", "protocol": "tls"}}}}}
    )  # fmt: skip
    target = sensor.rules["r"].dispatch.target
    assert syslog.destination(target) == "syslog tls://siem.example.com:6514"
    assert syslog.off_machine(target) and not syslog.off_machine(SyslogTarget(host="::1"))


# --- against a real rsyslogd ------------------------------------------------------------


def check_parsed(got: list[dict], facility: str = "local0", fmt: str = "json") -> None:
    """Every record arrived once, in order, and rsyslog parsed each into the fields the
    target promises."""
    assert len(got) == len(RECORDS)
    for rec, line, msg in zip(RECORDS, LINES, got, strict=True):
        level = severity.level(rec)
        assert msg["protocol_version"] == "1" and msg["app_name"] == "ways"
        assert msg["facility"] == facility
        assert msg["severity"] == {"error": "err"}.get(level, level)
        assert msg["msgid"] == rec["section"]
        assert msg["timestamp"] == rec["timestamp"]
        sd = json.loads(msg["sd"])[SD_ID]
        assert sd == {
            "session_id": rec["session_id"], "agent": "claude-code", "sensor": "audit",
            "rule": "all", "rule_seq": str(rec["rule_seq"]), "seq": str(rec["seq"]),
            "chain_hash": rec["chain"]["hash"],
            "user": "dana", "user_email": "dana@corp.example",
            "install_id": samples.IDENTITY["install_id"], "host_id": "4c4c4544004d3510",
        }  # fmt: skip
        if fmt == "json":
            assert msg["msg"].encode() == line
        elif fmt == "ocsf":
            event = json.loads(msg["msg"])
            assert samples.ocsf_errors(event) == [] and event["raw_data"].encode() == line
        else:
            assert json.loads(msg["msg"])["ways"] == rec


def test_tcp_every_record_once_parsed_by_rsyslog(rsyslog):
    out = send(SyslogTarget(host="127.0.0.1", port=rsyslog.port))
    assert out.status == ACCEPTED, out
    check_parsed(rsyslog.wait_for(len(RECORDS)))


@pytest.mark.parametrize("rsyslog", ["tls"], indirect=True)
def test_tls_with_ca_file_and_server_name(rsyslog, tmp_path):
    spec = SyslogTarget(host="127.0.0.1", port=rsyslog.port, protocol="tls",
                        ca_file=str(rsyslog.certs["ca"]), server_name="localhost",
                        facility="authpriv", format="ocsf")  # fmt: skip
    out = send(spec)
    assert out.status == ACCEPTED, out
    check_parsed(rsyslog.wait_for(len(RECORDS)), facility="authpriv", fmt="ocsf")
    # a server the CA does not vouch for is never sent a byte of content
    stranger = make_ca(tmp_path / "stranger")
    wrong = SyslogTarget(host="127.0.0.1", port=rsyslog.port, protocol="tls",
                         ca_file=str(stranger["ca"]), server_name="localhost")  # fmt: skip
    out = send(wrong, BATCH[:1])
    assert (out.status, out.cause) == (RETRYABLE, ERROR) and "VERIFY" in out.detail
    missing = SyslogTarget(host="127.0.0.1", port=rsyslog.port, protocol="tls",
                           ca_file=str(tmp_path / "no-such-ca.pem"))  # fmt: skip
    assert send(missing, BATCH[:1]).status == PERMANENT
    time.sleep(0.5)
    assert len(rsyslog.received()) == len(RECORDS)


@pytest.mark.parametrize("rsyslog", ["udp"], indirect=True)
def test_udp_one_datagram_per_record(rsyslog):
    spec = SyslogTarget(host="127.0.0.1", port=rsyslog.port, protocol="udp", format="ecs")
    assert send(spec).accepted
    check_parsed(rsyslog.wait_for(len(RECORDS)), fmt="ecs")
    huge = {**RECORDS[0], "data": {"text": "x" * 70_000}}
    out = send(spec, [Item(huge, json.dumps(huge).encode())])
    assert (out.status, out.cause) == (PERMANENT, ERROR)


def test_a_stopped_rsyslog_is_retryable_and_a_restarted_one_gets_the_batch(rsyslog):
    spec = SyslogTarget(host="127.0.0.1", port=rsyslog.port)
    rsyslog.kill()
    out = send(spec)
    assert (out.status, out.cause, out.detail) == (RETRYABLE, ERROR, "ECONNREFUSED")
    rsyslog.start()
    assert send(spec).accepted
    check_parsed(rsyslog.wait_for(len(RECORDS)))


def _server(behaviour: str):
    """A TCP receiver that misbehaves: `reset` closes at once without reading (the kernel
    answers the unread bytes with a reset); `silent` reads everything, never closes;
    `stalled` never reads and never closes. Returns what `silent` read, too."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    got = bytearray()

    def serve() -> None:
        conn, _ = listener.accept()
        if behaviour == "reset":
            time.sleep(0.2)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            conn.close()
            return
        conn.settimeout(0.1)
        while not stop.is_set():
            if behaviour == "stalled":
                stop.wait(0.1)
                continue
            try:
                got.extend(conn.recv(65536))
            except TimeoutError:
                pass
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, stop, got


BIG = [Item(RECORDS[0], LINES[0] + b" " * 200_000)] * 20  # more than socket buffers


@pytest.mark.parametrize(("behaviour", "cause"), [("reset", ERROR), ("stalled", TIMEOUT)])
def test_a_batch_counts_only_once_the_receiver_has_read_it(behaviour, cause):
    listener, stop, _ = _server(behaviour)
    try:
        spec = SyslogTarget(host="127.0.0.1", port=listener.getsockname()[1])
        out = syslog.deliver(spec, BIG, CTX, time.monotonic() + 1.5)
        assert (out.status, out.cause) == (RETRYABLE, cause), out
    finally:
        stop.set()
        listener.close()


def test_a_receiver_that_reads_everything_and_never_closes_gets_the_batch_once():
    """It got the same batch at every attempt (one record 6 times in 30 s) and the rule
    never moved on: once its TCP acknowledged every byte, the batch is accepted."""
    listener, stop, got = _server("silent")
    try:
        spec = SyslogTarget(host="127.0.0.1", port=listener.getsockname()[1])
        out = syslog.deliver(spec, BIG, CTX, time.monotonic() + 30)
        assert out.status == ACCEPTED and out.detail == "acknowledged, not closed", out
        want = b"".join(syslog.frame(syslog.message(spec, item)) for item in BIG)
        assert bytes(got) == want  # read once, whole
    finally:
        stop.set()
        listener.close()


# --- a recorded real Claude Code session, through the hook and the dispatcher ------------


def _replay(install, folder: Path, payloads: list[dict]) -> None:
    """The recorded session's payloads through the real hook, each with the transcript
    as the client had written it when it sent that payload."""
    raw = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    lines = [json.loads(x) for x in raw]
    transcript = folder / TRANSCRIPT.name
    if not transcript.exists():
        folder.mkdir(parents=True, exist_ok=True)
        transcript.write_bytes(b"")
        sub = TRANSCRIPT.parent / TRANSCRIPT.stem
        (folder / TRANSCRIPT.stem / "subagents").mkdir(parents=True, exist_ok=True)
        for f in (sub / "subagents").iterdir():
            (folder / TRANSCRIPT.stem / "subagents" / f.name).write_bytes(f.read_bytes())
    for p in payloads:
        upto = written_by(p, lines)
        done = len(transcript.read_bytes().splitlines())
        if upto is not None and upto >= done:
            with open(transcript, "ab") as f:
                f.writelines(raw[done : upto + 1])
        p = {k: (str(transcript) if k == "transcript_path" else v) for k, v in p.items()}
        r = install.hook(p)
        assert (r.returncode, r.stdout) == (0, b""), r


def _sensor(out: Path, port: int) -> str:
    sections = ("[user_prompt, queued_message, assistant_response, tool_call, tool_result,"
                " subagent, compaction, session_start, session_end]")  # fmt: skip
    return (
        "rules:\n"
        "  audit:\n"
        f"    sections: {sections}\n"
        "    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
        "  siem:\n"
        f"    sections: {sections}\n"
        "    delivery: at_least_once\n"
        "    chain: true\n"
        f"    dispatch: {{syslog: {{host: 127.0.0.1, port: {port}, facility: local4}}}}\n"
        "  ocsf:\n"
        f"    sections: {sections}\n"
        "    chain: true\n"
        f"    dispatch: {{file: {{path: '{out.with_suffix('.ocsf')}', format: ocsf}}}}\n"
        "  ecs:\n"
        f"    sections: {sections}\n"
        f"    dispatch: {{file: {{path: '{out.with_suffix('.ecs')}', format: ecs}}}}\n"
    )


def _wait_complete(install, out: Path, rsyslog: Rsyslog, timeout: float = 120.0):
    """(the file rule's records, the syslog messages) once the syslog rule has sent every
    record the file rule wrote, after the session's end."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        recs = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
        got = rsyslog.received()
        msgs, checkpoints = _split(got)
        seqs = {int(json.loads(m["sd"])[SD_ID]["rule_seq"]) for m in msgs}
        signed = {json.loads(m["msg"])["last_rule_seq"] for m in checkpoints}
        want = set(range(1, len(recs) + 1))
        if recs and recs[-1]["section"] == "session_end" and seqs >= want and len(recs) in signed:
            return recs, got
        time.sleep(0.2)
    raise AssertionError(f"incomplete: {len(recs)} records, {len(got)} messages")


def _split(got: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the records' messages, the signed checkpoints'): a chained rule's batch ends with
    its checkpoint, MSGID `checkpoint`, no rule_seq (docs/records.md)."""
    checkpoints = [m for m in got if m["msgid"] == "checkpoint"]
    return [m for m in got if m["msgid"] != "checkpoint"], checkpoints


def rule_fields() -> tuple[str, ...]:
    """What differs between two rules' copies of one record."""
    return ("sensor", "rule", "rule_seq", "chain")


def _same_records(install, tmp_path: Path, recs: list[dict], got: list[dict]) -> None:
    """Every record of the session came through syslog, parsed into the documented
    fields, and the syslog rule's chain and signed checkpoints verify from the messages
    alone, against the root key."""
    got, checkpoints = _split(got)
    assert checkpoints  # in-band, through syslog too
    for m in checkpoints:
        sd = json.loads(m["sd"])[SD_ID]
        assert "rule_seq" not in sd and sd["rule"] == "siem"
        assert json.loads(m["msg"])["schema"] == "ways.sensor.checkpoint/1"
    by_seq: dict[int, dict] = {}
    for m in got:
        by_seq.setdefault(int(json.loads(m["sd"])[SD_ID]["rule_seq"]), m)
    assert sorted(by_seq) == list(range(1, len(recs) + 1))
    for n, rec in enumerate(recs, 1):
        m = by_seq[n]
        sent = json.loads(m["msg"])
        assert {k: v for k, v in sent.items() if k not in rule_fields()} == {
            k: v for k, v in rec.items() if k not in rule_fields()
        }
        assert m["msgid"] == rec["section"] and m["facility"] == "local4"
        sd = json.loads(m["sd"])[SD_ID]
        assert sd["session_id"] == rec["session_id"] and sd["agent"] == "claude-code"
        assert (sd["rule"], sd["rule_seq"]) == ("siem", str(n))
        assert sd["chain_hash"] == sent["chain"]["hash"]
    chained = tmp_path / "from-syslog.jsonl"
    chained.write_text("".join(by_seq[n]["msg"] + "\n" for n in sorted(by_seq)))
    r = install.ways("sensors", "verify", str(chained))
    assert r.returncode == 0, r.stdout + r.stderr
    signed = tmp_path / "syslog-checkpoints.jsonl"
    signed.write_text("".join(m["msg"] + "\n" for m in checkpoints))
    key = json.loads(install.ways("keys", "show", "--json").stdout)["verifier_key"]
    r = install.ways("sensors", "verify", str(chained), str(signed), "--key", key)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_a_recorded_session_reaches_rsyslog_complete_and_once(install, tmp_path, rsyslog):
    out = tmp_path / "audit.jsonl"
    install.sensor("siem", _sensor(out, rsyslog.port))
    _replay(install, tmp_path / "transcripts", hooks())
    recs, got = _wait_complete(install, out, rsyslog)
    assert len(recs) >= 20
    time.sleep(1.0)  # anything late would be a duplicate
    got = rsyslog.received()
    assert len(_split(got)[0]) == len(recs)  # once: no retry was needed, none was made
    _same_records(install, tmp_path, recs, got)
    # the same real session as OCSF events and ECS documents: each valid, none lost
    events = [json.loads(x) for x in out.with_suffix(".ocsf").read_text().splitlines()]
    signed = [e for e in events if e["metadata"]["event_code"] == "checkpoint"]  # chained
    assert signed and all(samples.ocsf_errors(e) == [] for e in signed)
    assert all(json.loads(e["raw_data"])["section"] == "checkpoint" for e in signed)
    events = [e for e in events if e not in signed]
    docs = [json.loads(x) for x in out.with_suffix(".ecs").read_text().splitlines()]
    assert len(events) == len(docs) == len(recs)
    for event, doc, rec in zip(events, docs, recs, strict=True):
        assert samples.ocsf_errors(event) == [], event["class_uid"]
        raw = json.loads(event["raw_data"])
        assert {k: v for k, v in raw.items() if k not in rule_fields()} == {
            k: v for k, v in rec.items() if k not in rule_fields()
        }
        assert doc["event"]["action"] == rec["section"] and doc["ecs"]["version"]
        assert doc["ways"]["data"] == rec["data"]
    assert {e["class_uid"] for e in events} >= {1007, 6003, 3002, 6002}


@pytest.mark.slow
def test_rsyslog_killed_mid_session_loses_nothing(install, tmp_path, rsyslog):
    out = tmp_path / "audit.jsonl"
    install.sensor("siem", _sensor(out, rsyslog.port))
    payloads = hooks()
    half = len(payloads) // 2
    _replay(install, tmp_path / "transcripts", payloads[:half])
    end = time.monotonic() + 60
    while not rsyslog.received() and time.monotonic() < end:
        time.sleep(0.05)
    assert rsyslog.received()
    rsyslog.kill()  # mid-session: records keep coming while it is down
    _replay(install, tmp_path / "transcripts", payloads[half:])
    time.sleep(1.0)
    rsyslog.start()
    recs, got = _wait_complete(install, out, rsyslog)
    _same_records(install, tmp_path, recs, got)
    counters = _counters(install, "siem/siem")
    assert counters.get("retries", 0) >= 1  # the kill was felt, and ridden out
    assert counters.get("lost", 0) == 0 and counters.get("rejected", 0) == 0


def _counters(install, rule: str, timeout: float = 30.0) -> dict:
    """The rule's counters from `ways status --json`, once they show a retry."""
    end = time.monotonic() + timeout
    while True:
        r = install.ways("status", "--json")
        assert r.returncode == 0, r.stderr
        [row] = [x for x in json.loads(r.stdout)["rules"] if x["rule"] == rule]
        if row["counters"].get("retries", 0) or time.monotonic() > end:
            return row["counters"]
        time.sleep(0.2)


def test_lint_warns_that_udp_cannot_be_at_least_once(install):
    install.sensor(
        "siem",
        """
        rules:
          udp:
            sections: [tool_call]
            delivery: at_least_once
            dispatch: {syslog: {host: 127.0.0.1, protocol: udp}}
          tcp:
            sections: [tool_call]
            delivery: at_least_once
            dispatch: {syslog: {host: 127.0.0.1}}
        """,
    )
    r = install.ways("sensors", "lint", "--json")
    assert r.returncode == 0, r.stdout
    warned = {w["rule"] for w in json.loads(r.stdout)["warnings"] if "udp" in w["message"]}
    assert warned == {"udp"}
