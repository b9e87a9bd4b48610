"""The http target against real loopback servers: outcomes, Retry-After, the deadline."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

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
from ways_sensors.targets import http as target
from ways_sensors.targets.http import HttpTarget

from ..servers import Server, free_port

REC = {"section": "tool_call", "data": {"tool_name": "Bash"}}
LINE = b'{"section":"tool_call","data":{"tool_name":"Bash"}}'
CTX = Context("s", "r")  # an unbatched rule: one request per record


@pytest.fixture
def server(request):
    s = Server(request.param)
    yield s
    s.close()


def deliver(url, timeout=2.0, headers=None, batch=None):
    spec = HttpTarget(url=url, headers=headers or {})
    t = time.monotonic()
    out = target.deliver(spec, batch or [Item(REC, LINE)], CTX, t + timeout)
    return out, time.monotonic() - t


def scripted(status: int, headers: dict[str, str] | None = None):
    server = Server("script", script=[(status, headers or {})])
    try:
        out, _ = deliver(server.url)
        assert len(server.attempts) == 1
        return out
    finally:
        server.close()


@pytest.mark.parametrize("server", ["accept"], indirect=True)
def test_accepting_server_gets_the_json_and_env_headers(server, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_TOKEN", "s3cret")
    out, _ = deliver(server.url, headers={"Authorization": "Bearer ${WAYS_TEST_TOKEN}"})
    assert out.status == ACCEPTED and out.accepted
    assert server.bodies == [REC]
    assert server.headers[0]["authorization"] == "Bearer s3cret"
    assert server.headers[0]["content-type"] == "application/json"


@pytest.mark.parametrize("server", ["accept"], indirect=True)
def test_unset_header_variable_is_retryable_and_sends_nothing(server):
    # a set-up fault, not the consumer's verdict: held and retried (test_unset_header.py)
    out, _ = deliver(server.url, headers={"X": "${WAYS_SURELY_UNSET_VAR}"})
    assert (out.status, out.cause) == (RETRYABLE, ERROR)
    assert "WAYS_SURELY_UNSET_VAR" in out.detail
    assert server.bodies == []


@pytest.mark.parametrize("server", ["refuse"], indirect=True)
def test_503_is_a_retryable_refusal(server):
    out, _ = deliver(server.url)
    assert (out.status, out.cause, out.detail) == (RETRYABLE, REFUSED, "HTTP 503")
    assert out.retry_after is None


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses(status):
    out = scripted(status)
    assert (out.status, out.cause, out.detail) == (RETRYABLE, REFUSED, f"HTTP {status}")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_credential_is_retried_not_a_verdict_on_the_record(status):
    out = scripted(status)
    assert (out.status, out.cause) == (RETRYABLE, REFUSED)
    assert out.detail == f"HTTP {status}: credentials refused"


@pytest.mark.parametrize("status", [400, 404, 410, 413, 422, 301])
def test_permanent_statuses(status):
    out = scripted(status)
    assert (out.status, out.cause) == (PERMANENT, REFUSED)
    assert out.detail.startswith(f"HTTP {status}")


def test_retry_after_seconds_on_429_and_date_on_503():
    assert scripted(429, {"Retry-After": "7"}).retry_after == 7.0
    later = scripted(503, {"Retry-After": formatdate(time.time() + 5, usegmt=True)})
    assert later.status == RETRYABLE and 3.0 < (later.retry_after or 0) <= 5.0
    past = scripted(503, {"Retry-After": formatdate(time.time() - 60, usegmt=True)})
    assert past.retry_after == 0.0


def test_retry_after_is_ignored_where_it_means_nothing_or_is_unreadable():
    assert scripted(500, {"Retry-After": "7"}).retry_after is None
    assert scripted(429, {"Retry-After": "soon"}).retry_after is None
    assert scripted(400, {"Retry-After": "7"}).retry_after is None


@pytest.mark.parametrize("server", ["hang", "trickle"], indirect=True)
def test_hanging_and_trickling_servers_are_cut_at_the_deadline(server):
    out, took = deliver(server.url, timeout=1.5)
    assert (out.status, out.cause) == (RETRYABLE, TIMEOUT)
    # a trickling server sends a byte a second: a per-read timeout would never fire
    assert took < 5


def test_nobody_listening_is_a_retryable_error():
    out, _ = deliver(f"http://127.0.0.1:{free_port()}/x")
    assert (out.status, out.cause) == (RETRYABLE, ERROR)


@pytest.mark.parametrize("server", ["flood"], indirect=True)
def test_a_huge_response_body_is_cut_after_the_cap(server):
    out, _ = deliver(server.url, timeout=60)
    assert out.status == ACCEPTED
    last, stable_since = -1, time.monotonic()
    while time.monotonic() - stable_since < 0.5:  # until the server stops sending
        if server.sent != last:
            last, stable_since = server.sent, time.monotonic()
        time.sleep(0.05)
    # reading the whole body would have taken all of FLOOD (1 GiB) from the server
    assert server.sent < Server.FLOOD // 16


def test_a_batch_is_one_request_per_record_until_batches_have_a_format():
    server = Server("script", script=[])
    try:
        recs = [{"n": 1}, {"n": 2}]
        out, _ = deliver(
            server.url, batch=[Item(r, repr(r).replace("'", '"').encode()) for r in recs]
        )
        assert out.status == ACCEPTED and server.bodies == recs
    finally:
        server.close()
    refusing = Server("script", script=[(200, {}), (400, {})])
    try:
        batch = [Item({"n": i}, b'{"n":%d}' % i) for i in range(3)]
        out, _ = deliver(refusing.url, batch=batch)
        assert out.status == PERMANENT and len(refusing.attempts) == 2  # stops at the refusal
    finally:
        refusing.close()


def test_describes_itself():
    remote = HttpTarget(url="https://collector.example.com/in")
    local = HttpTarget(url="http://127.0.0.1:8080/in")
    assert target.destination(remote) == "http https://collector.example.com/in"
    assert target.off_machine(remote) and not target.off_machine(local)
    assert not target.off_machine(HttpTarget(url="http://localhost:1/x"))


def test_an_http_url_loads_no_ca_bundle_and_an_https_one_verifies():
    """Plain HTTP speaks no TLS: its client gets a context without the CA bundle (made
    once); an https URL's context verifies certificates and host names."""
    import ssl

    from ways_sensors.targets import transport

    plain, secure = transport._verify("http://127.0.0.1:1/x"), transport._verify("https://a/x")
    assert plain.verify_mode == ssl.CERT_NONE and plain.cert_store_stats()["x509_ca"] == 0
    assert secure.verify_mode == ssl.CERT_REQUIRED and secure.check_hostname
    assert transport._verify("HTTP://b") is plain and transport._verify("https://c") is secure
