"""The http target against real loopback servers, under its total deadline."""

from __future__ import annotations

import time

import pytest

from ways_sensors.spec import HttpTarget
from ways_sensors.targets import DELIVERED, ERROR, REFUSED, TIMEOUT
from ways_sensors.targets import http as target

from ..servers import Server, free_port

REC = {"section": "tool_call", "data": {"tool_name": "Bash"}}
LINE = b'{"section":"tool_call","data":{"tool_name":"Bash"}}'


@pytest.fixture
def server(request):
    s = Server(request.param)
    yield s
    s.close()


def deliver(url, timeout=2.0, headers=None):
    spec = HttpTarget(url=url, headers=headers or {})
    t = time.monotonic()
    out = target.deliver(spec, REC, LINE, {}, t + timeout)
    return out, time.monotonic() - t


@pytest.mark.parametrize("server", ["accept"], indirect=True)
def test_accepting_server_gets_the_json_and_env_headers(server, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_TOKEN", "s3cret")
    out, _ = deliver(server.url, headers={"Authorization": "Bearer ${WAYS_TEST_TOKEN}"})
    assert out.status == DELIVERED
    assert server.bodies == [REC]
    assert server.headers[0]["authorization"] == "Bearer s3cret"
    assert server.headers[0]["content-type"] == "application/json"


@pytest.mark.parametrize("server", ["accept"], indirect=True)
def test_unset_header_variable_refuses_to_send(server):
    out, _ = deliver(server.url, headers={"X": "${WAYS_SURELY_UNSET_VAR}"})
    assert out.status == ERROR and "WAYS_SURELY_UNSET_VAR" in out.detail
    assert server.bodies == []


@pytest.mark.parametrize("server", ["refuse"], indirect=True)
def test_non_2xx_is_a_refusal(server):
    out, _ = deliver(server.url)
    assert (out.status, out.detail) == (REFUSED, "HTTP 503")


@pytest.mark.parametrize("server", ["hang", "trickle"], indirect=True)
def test_hanging_and_trickling_servers_are_cut_at_the_deadline(server):
    out, took = deliver(server.url, timeout=1.5)
    assert out.status == TIMEOUT
    # a trickling server sends a byte a second: a per-read timeout would never fire
    assert took < 5


def test_nobody_listening_is_an_error():
    out, _ = deliver(f"http://127.0.0.1:{free_port()}/x")
    assert out.status == ERROR
