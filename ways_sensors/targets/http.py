"""The `http` target: POST the record as JSON; any 2xx is acceptance.

One request per record, its body the record's JSON object, unless the rule is batched
(its `batch:` allows more than one record per attempt; the worker says so in ctx
`max_records`): then one request per batch, in the target's `format`:

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

Header values may be `${ENV_NAME}`, read from the environment at dispatch time (an
unset variable refuses the dispatch rather than sending an empty credential). The
deadline is total, not per read: the request runs under `asyncio.wait_for` on the
worker's own event loop, so a server that accepts and then trickles a byte a second
is cut at the rule timeout and its connection closed. At most BODY_CAP bytes of a
response body are read (raw, never decompressed), the rest is discarded with the
connection: a consumer answering gigabytes costs nothing.

Failures: connection errors, timeouts, 408, 429 and 5xx are retryable (with the
server's `Retry-After` on 429 and 503, in seconds or as an HTTP date), and so are 401
and 403 (detail `HTTP 401: credentials refused`): an expired token says nothing about
the record, so the rule waits and tries again with the backoff, logging each attempt,
rather than parking everything until the token is renewed; an unset header
variable, a header value HTTP cannot carry, a redirect (never followed) and any other
4xx are permanent. asyncio and httpx are imported at the first delivery, not with the
registry.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from msgspec import Meta, Struct

from .base import ERROR, REFUSED, TIMEOUT, Item, Outcome, accepted, permanent, retryable

if TYPE_CHECKING:
    import asyncio


class HttpTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """POST each record as JSON; any 2xx is acceptance. Header values may be ${ENV_NAME}.
    A rule with `batch:` posts a batch per request, as `format` says."""

    url: Annotated[str, Meta(pattern=r"^https?://")]
    headers: dict[str, str] = {}
    format: Annotated[
        Literal["array", "ndjson", "ocsf", "ecs", "splunk_hec"],
        Meta(
            description="the records as they are, a batch as a JSON array (array) or "
            "one per line (ndjson); OCSF events or ECS documents (a batch as a JSON "
            "array); Splunk HEC event envelopes (splunk_hec, docs/security.md)"
        ),
    ] = "array"


Spec = HttpTarget
SECRET_FIELDS: tuple[str, ...] = ("headers",)

BODY_CAP = 64 * 1024
RETRYABLE_STATUS = frozenset({408, 429})
AUTH_STATUS = frozenset({401, 403})  # retried with backoff: about the credential, not the record
RETRY_AFTER_STATUS = frozenset({429, 503})
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_local = threading.local()


class MissingEnv(KeyError):
    pass


def expand_header(value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise MissingEnv(m.group(1))
        return os.environ[m.group(1)]

    return _ENV.sub(sub, value)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110
    10.2.3); None when absent or unreadable. A date in the past is 0."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 850 / asctime forms parse naive; HTTP dates are GMT
        from datetime import timezone

        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(status: int, retry_after_header: str | None) -> Outcome:
    """An HTTP status as an outcome (the tree in delivery.py)."""
    if 200 <= status < 300:
        return accepted(str(status))
    detail = f"HTTP {status}"
    if status in AUTH_STATUS:  # an expired or revoked credential: the alarm is ours
        return retryable(REFUSED, detail + ": credentials refused")
    if status >= 500 or status in RETRYABLE_STATUS:
        wait = retry_after(retry_after_header) if status in RETRY_AFTER_STATUS else None
        return retryable(REFUSED, detail, wait)
    if 300 <= status < 400:
        return permanent(REFUSED, detail + " (redirects are not followed)")
    return permanent(REFUSED, detail)


def _loop() -> asyncio.AbstractEventLoop:
    import asyncio

    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


_tls: list[Any] = []  # the TLS context, made once: loading the CA bundle costs ~20 ms
_tls_lock = threading.Lock()


def _verify() -> Any:
    """httpx's default TLS verification, as one context every client shares."""
    import httpx

    with _tls_lock:
        if not _tls:
            make = getattr(httpx, "create_ssl_context", None)
            _tls.append(make() if make is not None else True)
        return _tls[0]


def close_loop() -> None:
    """Close this thread's event loop: for one-shot callers whose thread then ends
    (services/fire.py in the sensors tab's worker threads); the next call makes a new one."""
    loop = getattr(_local, "loop", None)
    if loop is not None and not loop.is_closed():
        loop.close()


async def _post(url: str, headers: dict[str, str], body: bytes) -> tuple[int, str | None, bytes]:
    """(status, Retry-After, at most BODY_CAP bytes of the body)."""
    import httpx

    # a fresh client per request: a cancelled request must not poison a pooled connection
    async with (
        httpx.AsyncClient(timeout=None, follow_redirects=False, verify=_verify()) as client,
        client.stream("POST", url, content=body, headers=headers) as resp,
    ):
        got = bytearray()
        async for chunk in resp.aiter_raw():
            got += chunk[: BODY_CAP - len(got)]
            if len(got) >= BODY_CAP:
                break  # leaving the stream closes the connection: the rest is never read
        return resp.status_code, resp.headers.get("retry-after"), bytes(got)


def _send(
    spec: HttpTarget, headers: dict[str, str], line: bytes, deadline: float, url: str = ""
) -> Outcome:
    outcome, _ = _exchange(spec, headers, line, deadline, url)
    return outcome


def _exchange(
    spec: HttpTarget, headers: dict[str, str], line: bytes, deadline: float, url: str = ""
) -> tuple[Outcome, bytes]:
    """One request: its outcome and (at most BODY_CAP bytes of) the answer's body."""
    import asyncio

    import httpx

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return retryable(TIMEOUT, "deadline passed before the request"), b""
    try:
        status, wait, body = _loop().run_until_complete(
            asyncio.wait_for(_post(url or spec.url, headers, line), timeout=remaining)
        )
    except asyncio.TimeoutError:
        return retryable(TIMEOUT, "cut at the rule timeout"), b""
    except (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.LocalProtocolError) as exc:
        return permanent(ERROR, type(exc).__name__), b""  # the same request can never be sent
    except UnicodeError as exc:  # a header value HTTP cannot carry
        return permanent(ERROR, type(exc).__name__), b""
    except Exception as exc:  # httpx.TransportError, OSError, ...: the consumer was unreachable
        return retryable(ERROR, type(exc).__name__), b""
    outcome = classify(status, wait)
    if spec.format == "splunk_hec":
        from . import hec

        outcome = hec.refine(outcome, status, body)
    return outcome, body


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


def _batched(ctx: Mapping[str, str]) -> bool:
    try:
        return int(ctx.get("max_records", "1")) > 1
    except ValueError:
        return False


def deliver(
    spec: HttpTarget, batch: Sequence[Item], ctx: Mapping[str, str], deadline: float
) -> Outcome:
    try:
        headers = {k: expand_header(v) for k, v in spec.headers.items()}
    except MissingEnv as exc:
        return permanent(ERROR, f"header variable {exc.args[0]} is not set")
    docs = [i.line for i in batch]
    if spec.format in ("ocsf", "ecs", "splunk_hec"):
        from .. import formats

        docs = [formats.encode(spec.format, i.record, i.line) for i in batch]
    if spec.format == "splunk_hec":
        headers.setdefault("content-type", "application/json")
        return _send_hec(spec, headers, formats.body(docs, "lines"), deadline)
    if _batched(ctx):
        from .. import formats

        if spec.format == "ndjson":
            headers.setdefault("content-type", "application/x-ndjson")
            return _send(spec, headers, formats.body(docs, "lines"), deadline)
        headers.setdefault("content-type", "application/json")
        return _send(spec, headers, formats.body(docs, "array"), deadline)
    headers.setdefault("content-type", "application/json")
    outcome = accepted()
    for doc in docs:  # an unbatched rule's batch is one record; one request each anyway
        outcome = _send(spec, headers, doc, deadline)
        if not outcome.accepted:
            break
    return outcome


def is_loopback_url(url: str) -> bool:
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def destination(spec: HttpTarget) -> str:
    return f"http {spec.url}"


def off_machine(spec: HttpTarget) -> bool:
    return not is_loopback_url(spec.url)
