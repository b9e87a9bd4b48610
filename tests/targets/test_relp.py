"""The syslog target over RELP (targets/relp.py): against a real rsyslogd's imrelp
(Debian's rsyslog-relp), every message acknowledged; against scripted RELP servers, a
refusal, a connection cut before every acknowledgement and a silent server, each a
retryable failure of the whole batch; and a session through the real hook and dispatcher
across an rsyslogd killed and restarted, nothing missing at the receiver."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from ways_sensors.targets import ACCEPTED, ERROR, REFUSED, RETRYABLE, TIMEOUT, Context, Item, syslog
from ways_sensors.targets.relp import _Reader, frame
from ways_sensors.targets.syslog import SyslogTarget

from ..formats import samples
from ..helpers import counters_of, dispatcher_done, play, wait_until
from ..rsyslog import SD_ID, Rsyslog, client_cert

CTX = Context("s", "r")
RECORDS = samples.records()
BATCH = [Item(r, line) for r, line in zip(RECORDS, samples.lines(RECORDS), strict=True)]


def send(spec, batch=BATCH, timeout=10.0):
    return syslog.deliver(spec, batch, CTX, time.monotonic() + timeout)


@pytest.fixture
def imrelp(tmp_path):
    server = Rsyslog(tmp_path / "rsyslog", "relp")
    yield server
    server.close()


def test_every_record_acknowledged_by_imrelp(imrelp):
    out = send(SyslogTarget(host="127.0.0.1", port=imrelp.port, protocol="relp"))
    assert out.status == ACCEPTED and str(len(BATCH)) in out.detail, out
    got = imrelp.wait_for(len(BATCH))
    assert [json.loads(m["msg"]) for m in got] == RECORDS
    assert [int(json.loads(m["sd"])[SD_ID]["rule_seq"]) for m in got] == [
        r["rule_seq"] for r in RECORDS
    ]


class Scripted:
    """A RELP server in a thread: answers `open`, then each syslog frame as `answer(n)`
    says: the response's data, b"" to stay silent, or None to close the connection.
    It reads frames with the target's own reader (a fake server needs no second one)."""

    def __init__(self, answer):
        self.answer, self.frames = answer, 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        self.sock.close()  # one connection is all a case needs
        reader = _Reader(conn, time.monotonic() + 60)
        with conn:
            while True:
                try:
                    txnr, command, data = reader.frame()
                except Exception:
                    return
                if command == b"open":
                    conn.sendall(frame(txnr, b"rsp", b"200 OK\n" + data))
                    continue
                self.frames += 1
                reply = self.answer(self.frames)
                if reply is None:
                    return
                if reply:
                    try:
                        conn.sendall(frame(txnr, b"rsp", reply))
                    except OSError:  # the client gave up on the batch: done
                        return


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        (lambda n: b"500 busy", REFUSED),  # the server refuses the message
        (lambda n: b"200 OK" if n < 3 else None, ERROR),  # cut before every ack
        (lambda n: b"", TIMEOUT),  # never answers
    ],
    ids=["refused", "cut", "silent"],
)
def test_a_batch_is_delivered_only_when_every_message_was_acknowledged(answer, cause):
    server = Scripted(answer)
    out = send(SyslogTarget(host="127.0.0.1", port=server.port, protocol="relp"), timeout=2)
    assert (out.status, out.cause) == (RETRYABLE, cause), out


@pytest.mark.slow
def test_imrelp_killed_and_restarted_mid_session_nothing_missing(install, tmp_path, imrelp):
    install.sensor(
        "siem",
        f"""
        rules:
          siem:
            sections: [user_prompt]
            delivery: at_least_once
            chain: true
            dispatch: {{syslog: {{host: 127.0.0.1, port: {imrelp.port}, protocol: relp}}}}
        """,
    )
    sid = "33333333-3333-4333-8333-333333333333"
    prompts = 40
    for i in range(prompts):
        play(install, ["UserPromptSubmit"], session_id=sid, prompt=f"p{i}")
        if i in (10, 25):
            imrelp.kill()
            time.sleep(0.5)
            imrelp.start()
    play(install, ["SessionEnd"], session_id=sid)
    assert wait_until(lambda: dispatcher_done(install, sid), timeout=120)
    got = [json.loads(m["msg"]) for m in imrelp.received()]
    got = [r for r in got if r["section"] != "checkpoint"]  # signed, per batch
    assert {r["rule_seq"] for r in got} == set(range(1, prompts + 1))
    assert counters_of(install, "siem/siem")["delivered"] == prompts


def test_relp_inside_mutual_tls(tmp_path):
    """imrelp asking for a client certificate of its CA: refused without one (retryable),
    accepted with one; a server the CA does not vouch for is never trusted."""
    server = Rsyslog(tmp_path / "rsyslog", "relp-tls")
    client = client_cert(server.certs, tmp_path / "client")
    try:
        common = {"host": "127.0.0.1", "port": server.port, "protocol": "relp-tls"}
        ca = {"ca_file": str(server.certs["ca"]), "server_name": "localhost"}
        refused = send(SyslogTarget(**common, **ca), timeout=3)
        assert (refused.status, refused.cause) == (RETRYABLE, ERROR), refused
        mine = {"cert_file": str(client["cert"]), "key_file": str(client["key"])}
        out = send(SyslogTarget(**common, **ca, **mine))
        assert out.status == ACCEPTED, out
        assert len(server.wait_for(len(BATCH))) == len(BATCH)
        untrusted = send(SyslogTarget(**common, **mine, server_name="localhost"), timeout=3)
        assert (untrusted.status, untrusted.cause) == (RETRYABLE, ERROR), untrusted
    finally:
        server.close()
