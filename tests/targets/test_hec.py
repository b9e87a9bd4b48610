"""`format: splunk_hec` on the http target against a loopback HEC that checks every
request as HEC documents it (tests/hec_server.py): envelope, batch, token, channel,
indexer acknowledgement, and HEC's codes as retryable or permanent."""

from __future__ import annotations

import json
import time

import pytest

from ways_sensors import formats
from ways_sensors.targets import ACCEPTED, PERMANENT, REFUSED, RETRYABLE, TIMEOUT, Item
from ways_sensors.targets import http as target
from ways_sensors.targets.http import HttpTarget

from ..formats import samples
from ..hec_server import Hec, concatenated

RECORDS = samples.records()
BATCH = [Item(r, line) for r, line in zip(RECORDS, samples.lines(RECORDS), strict=True)]
BATCHED = {"max_records": "512"}


@pytest.fixture
def hec(request):
    server = Hec(**getattr(request, "param", {}))
    yield server
    server.close()


def send(hec, batch=BATCH, token="${WAYS_TEST_HEC}", timeout=5.0, ctx=BATCHED):
    spec = HttpTarget(url=hec.url, format="splunk_hec",
                      headers={"Authorization": f"Splunk {token}"})  # fmt: skip
    return target.deliver(spec, batch, ctx, time.monotonic() + timeout)


def test_a_batch_is_one_request_of_concatenated_envelopes(hec, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_HEC", "t0ken")
    out = send(hec)
    assert out.status == ACCEPTED, out
    assert hec.problems == [] and len(hec.requests) == 1
    assert [e["event"] for e in hec.events] == RECORDS  # every record, in order, whole
    assert hec.events == [json.loads(formats.encode("splunk_hec", i.record, i.line))
                          for i in BATCH]  # fmt: skip
    assert hec.requests[0]["authorization"] == "Splunk t0ken"
    assert hec.requests[0]["x-splunk-request-channel"]


def test_an_unbatched_rule_sends_one_envelope(hec, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_HEC", "t0ken")
    assert send(hec, BATCH[:1], ctx={}).accepted
    assert [e["event"] for e in hec.events] == RECORDS[:1]


def test_the_receiver_refuses_what_hec_refuses(hec):
    """The loopback HEC is strict: a wrong token, a body that is not concatenated JSON
    objects, and an envelope without `event` are refused with HEC's codes."""
    out = send(hec, token="wrong")
    assert (out.status, out.cause) == (RETRYABLE, REFUSED)  # the credential, not the records
    assert "HEC code 4" in out.detail
    assert hec.handle("/services/collector/event", {"Authorization": "Splunk t0ken"},
                      b"[1, 2]")[1]["code"] == 6  # fmt: skip
    assert hec.handle("/services/collector/event", {"Authorization": "Splunk t0ken"},
                      b'{"time": 1}')[1]["code"] == 12  # fmt: skip
    assert concatenated('{"a":1}{"b":2}\n{"c":3}') == [{"a": 1}, {"b": 2}, {"c": 3}]


@pytest.mark.parametrize(
    ("status", "code", "expect"),
    [
        (503, 9, RETRYABLE),  # server is busy
        (500, 8, RETRYABLE),  # internal server error
        (503, 18, RETRYABLE),  # unhealthy, queues full
        (403, 1, RETRYABLE),  # token disabled: retried like any 401/403, never parked
        (400, 6, PERMANENT),  # invalid data format
        (400, 7, PERMANENT),  # incorrect index
        (400, 10, PERMANENT),  # data channel missing
    ],
)
def test_hec_codes(hec, monkeypatch, status, code, expect):
    monkeypatch.setenv("WAYS_TEST_HEC", "t0ken")
    hec.script.append((status, code))
    out = send(hec)
    assert out.status == expect, out
    assert f"HEC code {code}" in out.detail


@pytest.mark.parametrize("hec", [{"ack": True, "ack_after": 2}], indirect=True)
def test_indexer_acknowledgement_is_awaited(hec, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_HEC", "t0ken")
    out = send(hec)
    assert out.accepted, out
    assert hec.polls == {0: 3}  # accepted only once HEC said ackId 0 was indexed
    assert len(hec.events) == len(RECORDS)


@pytest.mark.parametrize("hec", [{"ack": True, "ack_after": 10**9}], indirect=True)
def test_an_unconfirmed_batch_is_retryable(hec, monkeypatch):
    monkeypatch.setenv("WAYS_TEST_HEC", "t0ken")
    out = send(hec, timeout=1.0)
    assert (out.status, out.cause) == (RETRYABLE, TIMEOUT)
    assert "ackId 0" in out.detail
