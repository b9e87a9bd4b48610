"""Syslog over UDP has no acknowledgement, so nothing ways says claims one: `ways sensors
fire` reports `unconfirmed` and exits NOT_CONFIRMED (10), never "delivered", and the
dispatcher counts what it sent as `unconfirmed`, not `delivered`. A real UDP socket on
loopback receives the datagrams; the fire and the dispatcher are real processes."""

from __future__ import annotations

import json
import socket

from ways_sensors.errors import NOT_CONFIRMED

from ..conftest import payload
from ..evidence.runs import calls, dispatch
from ..helpers import counters_of, spool_directly


def _receiver() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(30)
    return sock


def _rule(install, port: int) -> None:
    install.sensor(
        "siem",
        "rules:\n  udp:\n    sections: [tool_call, session_start]\n"
        f"    dispatch: {{syslog: {{host: 127.0.0.1, port: {port}, protocol: udp}}}}\n",
    )


def test_fire_over_udp_says_unconfirmed_and_exits_not_confirmed(install):
    with _receiver() as sock:
        _rule(install, sock.getsockname()[1])
        r = install.ways("sensors", "fire", "siem/udp", "--section", "tool_call")
        assert r.returncode == NOT_CONFIRMED, r.stdout + r.stderr
        assert "delivered" not in r.stdout
        assert (
            "siem/udp: unconfirmed (sent over UDP: no acknowledgement, cannot be confirmed)"
            in r.stdout
        )
        assert b"ways-fire-" in sock.recv(65535)  # it was sent all the same
        r = install.ways("sensors", "fire", "siem/udp", "--section", "tool_call", "--json")
        assert r.returncode == NOT_CONFIRMED
        [res] = json.loads(r.stdout)
        assert res["result"] == "unconfirmed" and res["outcome"] == "accepted"
        assert "no acknowledgement" in res["detail"]
        sock.recv(65535)


def test_records_sent_over_udp_count_as_unconfirmed_not_delivered(install):
    with _receiver() as sock:
        _rule(install, sock.getsockname()[1])
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 3)])
        dispatch(install)
        got = [sock.recv(65535) for _ in range(4)]
    assert len(got) == 4
    c = counters_of(install, "siem/udp")
    assert c["dispatched"] == 4
    assert (c["unconfirmed"], c["delivered"]) == (4, 0)
