"""The `http` target: POST the record as JSON; any 2xx is acceptance.

One request per record, its body the record's JSON object, unless the rule is batched
(its `batch:` allows more than one record per attempt: `Context.batched`): then one
request per batch, in the target's `format`:

    array    (the default) a JSON array of the batch's records, in order,
             content-type application/json; a batch of one is an array of one
    ndjson   one record per line, each ending in a newline,
             content-type application/x-ndjson

A `content-type` header in the spec wins. The whole batch is one outcome: a refusal
retries or parks every record of it (delivery.py).

The request itself is transport.py's, shared with the otlp target: header values may
be `${ENV_NAME}`, the deadline is total, at most BODY_CAP bytes of an answer are read.
Failures: connection errors, timeouts, 408, 429 and 5xx are retryable (with the
server's `Retry-After` on 429 and 503, in seconds or as an HTTP date); an unset header
variable, a header value HTTP cannot carry, a redirect (never followed) and any other
4xx are permanent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from msgspec import Meta, Struct

from . import transport
from .base import REFUSED, Context, Item, Outcome, accepted, permanent, retryable


class HttpTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """POST each record as JSON; any 2xx is acceptance. Header values may be ${ENV_NAME}.
    A rule with `batch:` posts a batch per request, as `format` says."""

    url: Annotated[str, Meta(pattern=r"^https?://")]
    headers: dict[str, str] = {}
    format: Annotated[
        Literal["array", "ndjson"],
        Meta(
            description="a batched rule's request body: a JSON array of records, or "
            "NDJSON (one record per line); an unbatched rule posts one JSON object"
        ),
    ] = "array"


Spec = HttpTarget
SECRET_FIELDS: tuple[str, ...] = ("headers",)
BATCH_DEFAULT = (1, 0.0)  # one request per record unless the rule sets `batch:`

RETRYABLE_STATUS = frozenset({408, 429})
RETRY_AFTER_STATUS = frozenset({429, 503})


def classify(status: int, retry_after_header: str | None) -> Outcome:
    """An HTTP status as an outcome (the tree in delivery.py)."""
    if 200 <= status < 300:
        return accepted(str(status))
    detail = f"HTTP {status}"
    if status >= 500 or status in RETRYABLE_STATUS:
        wait = transport.retry_after(retry_after_header) if status in RETRY_AFTER_STATUS else None
        return retryable(REFUSED, detail, wait)
    if 300 <= status < 400:
        return permanent(REFUSED, detail + " (redirects are not followed)")
    return permanent(REFUSED, detail)


def _send(url: str, headers: dict[str, str], body: bytes, deadline: float) -> Outcome:
    answer = transport.send(url, headers, body, deadline)
    if isinstance(answer, Outcome):
        return answer
    return classify(answer.status, answer.retry_after)


def deliver(spec: HttpTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    headers = transport.headers(spec.headers)
    if isinstance(headers, Outcome):
        return headers
    if ctx.batched:
        if spec.format == "ndjson":
            headers.setdefault("content-type", "application/x-ndjson")
            body = b"".join(i.line + b"\n" for i in batch)
        else:
            headers.setdefault("content-type", "application/json")
            body = b"[" + b",".join(i.line for i in batch) + b"]"
        return _send(spec.url, headers, body, deadline)
    headers.setdefault("content-type", "application/json")
    outcome = accepted()
    for item in batch:  # an unbatched rule's batch is one record; one request each anyway
        outcome = _send(spec.url, headers, item.line, deadline)
        if not outcome.accepted:
            break
    return outcome


def close() -> None:
    transport.close()


def destination(spec: HttpTarget) -> str:
    return f"http {spec.url}"


def off_machine(spec: HttpTarget) -> bool:
    return not transport.is_loopback_url(spec.url)
