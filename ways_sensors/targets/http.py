"""The `http` target: POST the record as JSON; any 2xx is acceptance.

One request per record, its body the record's JSON object, unless the rule is batched
(its `batch:` allows more than one record per attempt: `Context.batched`): then one
request per batch, in the target's `format`:

    array    (the default) a JSON array of the batch's records, in order,
             content-type application/json; a batch of one is an array of one
    ndjson   one record per line, each ending in a newline,
             content-type application/x-ndjson

    ocsf, ecs    each record as an OCSF event or an ECS document (formats/); a batch
                 is a JSON array of them
    splunk_hec   each record in a Splunk HEC envelope; a batch is the envelopes one
                 per line, one request, batched or not; HEC's answers are read as
                 targets/hec.py says (codes, channel, indexer acknowledgement)

A `content-type` header in the spec wins. The whole batch is one outcome: a refusal
retries or parks every record of it (delivery.py).

The request itself is transport.py's, shared with the otlp target: header values may
be `${ENV_NAME}`, the deadline is total, at most BODY_CAP bytes of an answer are read.
Failures: connection errors, timeouts, 408, 429 and 5xx are retryable (with the
server's `Retry-After` on 429 and 503, in seconds or as an HTTP date), and so are 401
and 403 (detail `HTTP 401: credentials refused`): an expired token says nothing about
the record, so the rule waits and tries again with the backoff, logging each attempt,
rather than parking everything until the token is renewed; an unset header
variable, a header value HTTP cannot carry, a redirect (never followed) and any other
4xx are permanent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import Meta, Struct

from . import tlsconf, transport
from .base import (
    REFUSED,
    TIMEOUT,
    Context,
    Item,
    Outcome,
    accepted,
    permanent,
    refused_url,
    retryable,
)
from .headers_helper import HeadersHelper
from .tlsconf import Tls

if TYPE_CHECKING:
    from .base import Advice


class HttpTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """POST each record as JSON; any 2xx is acceptance. Header values may be ${ENV_NAME}.
    A rule with `batch:` posts a batch per request, as `format` says."""

    url: Annotated[str, Meta(pattern=r"^https?://")]
    headers: dict[str, str] = {}
    tls: Tls | None = None  # tlsconf.py: verification and a client certificate
    headers_helper: HeadersHelper | None = None  # headers_helper.py: short-lived headers
    format: Annotated[
        Literal["array", "ndjson", "ocsf", "ecs", "splunk_hec"],
        Meta(
            description="the records as they are, a batch as a JSON array (array) or "
            "one per line (ndjson); OCSF events or ECS documents (a batch as a JSON "
            "array); Splunk HEC event envelopes (splunk_hec, docs/security.md)"
        ),
    ] = "array"


Spec = HttpTarget
FORMAT_FIELD = "format"
# the spec's `format` as formats/ names it: `array` is the json format, framed by its BATCH
FORMATS = {
    "array": "json",
    "ndjson": "ndjson",
    "ocsf": "ocsf",
    "ecs": "ecs",
    "splunk_hec": "splunk_hec",
}
SECRET_FIELDS: tuple[str, ...] = ("headers",)
BATCH_DEFAULT = (1, 0.0)  # one request per record unless the rule sets `batch:`

RETRYABLE_STATUS = frozenset({408, 429})
AUTH_STATUS = frozenset({401, 403})  # retried with backoff: about the credential, not the record
RETRY_AFTER_STATUS = frozenset({429, 503})


def classify(status: int, retry_after_header: str | None) -> Outcome:
    """An HTTP status as an outcome (the tree in delivery.py)."""
    if 200 <= status < 300:
        return accepted(str(status))
    detail = f"HTTP {status}"
    if status in AUTH_STATUS:  # an expired or revoked credential: the alarm is ours
        return retryable(REFUSED, detail + ": credentials refused")
    if status >= 500 or status in RETRYABLE_STATUS:
        wait = transport.retry_after(retry_after_header) if status in RETRY_AFTER_STATUS else None
        return retryable(REFUSED, detail, wait)
    if 300 <= status < 400:
        return permanent(REFUSED, detail + " (redirects are not followed)")
    return permanent(REFUSED, detail)


def _exchange(
    spec: HttpTarget, headers: dict[str, str], body: bytes, deadline: float, url: str = ""
) -> tuple[Outcome, bytes]:
    """One request (transport.py): its outcome and (at most BODY_CAP bytes of) the
    answer's body."""
    answer = transport.send(url or spec.url, headers, body, deadline, spec.tls)
    if not isinstance(answer, Outcome) and answer.status == 401 and spec.headers_helper:
        fresh = transport.headers(spec.headers, spec.headers_helper, renew=True)
        if isinstance(fresh, Outcome):
            return fresh, b""
        headers.update(fresh)  # the rest of the batch goes with the new ones too
        answer = transport.send(url or spec.url, headers, body, deadline, spec.tls)
    if isinstance(answer, Outcome):
        return answer, b""
    outcome = classify(answer.status, answer.retry_after)
    if spec.format == "splunk_hec":
        from . import hec

        outcome = hec.refine(outcome, answer.status, answer.body)
    return outcome, answer.body


def _send(spec: HttpTarget, headers: dict[str, str], body: bytes, deadline: float) -> Outcome:
    return _exchange(spec, headers, body, deadline)[0]


def _send_hec(spec: HttpTarget, headers: dict[str, str], body: bytes, deadline: float) -> Outcome:
    """One HEC request, then, when HEC answers with an ackId, its indexing confirmed
    (targets/hec.py)."""
    from . import hec

    headers.setdefault("x-splunk-request-channel", hec.CHANNEL)
    outcome, answer = _exchange(spec, headers, body, deadline)
    ack_id = hec.answer(answer).get("ackId") if outcome.accepted else None
    where = hec.ack_url(spec.url)
    if not isinstance(ack_id, int) or where is None:
        return outcome
    wait = 0.05
    query = b'{"acks":[%d]}' % ack_id
    while True:
        polled, answer = _exchange(spec, headers, query, deadline, where)
        if polled.accepted and hec.acked(answer, ack_id):
            return outcome
        if not polled.accepted:
            return polled
        if time.monotonic() + wait >= deadline:
            return retryable(TIMEOUT, f"HEC did not confirm ackId {ack_id} by the deadline")
        time.sleep(wait)
        wait = min(wait * 2, 1.0)


def deliver(spec: HttpTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    headers = transport.headers(spec.headers, spec.headers_helper)
    if isinstance(headers, Outcome):
        return headers
    from .. import formats

    fmt = formats.get(FORMATS[spec.format])  # its documents, media type and framing
    docs = [fmt.encode(i.record, i.line) for i in batch]
    headers.setdefault("content-type", fmt.MEDIA_TYPE)
    if spec.format == "splunk_hec":  # HEC takes a batch of any size as one request
        return _send_hec(spec, headers, formats.body(docs, fmt.BATCH), deadline)
    if ctx.batched:
        return _send(spec, headers, formats.body(docs, fmt.BATCH), deadline)
    outcome = accepted()
    for doc in docs:  # an unbatched rule's batch is one record; one request each anyway
        outcome = _send(spec, headers, doc, deadline)
        if not outcome.accepted:
            break
    return outcome


def close() -> None:
    transport.close()


def destination(spec: HttpTarget) -> str:
    return f"http {spec.url}"


def off_machine(spec: HttpTarget) -> bool:
    return not transport.is_loopback_url(spec.url)


def warnings(spec: HttpTarget, at_least_once: bool) -> list[Advice]:
    return tlsconf.warnings(spec.tls)


def unreachable(spec: HttpTarget, timeout: float) -> str | None:
    return refused_url(spec.url, timeout)
