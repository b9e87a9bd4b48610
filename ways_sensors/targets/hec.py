"""Splunk HTTP Event Collector's answers, for the http target's `format: splunk_hec`.

HEC answers every request with a status and `{"text", "code"}`. The code decides where
it is more precise than the status (Splunk's "Troubleshoot HTTP Event Collector" table):

    retryable   8 internal server error, 9 server is busy, 18, 19 and 20 (HEC unhealthy:
                queues full, acknowledgement service unavailable), and any 5xx, 408, 429;
                1 token disabled, 2 token required, 3 invalid authorization, 4 invalid
                token: like the http target's 401 and 403, about the credential, not
                the records, so they wait for a fixed token rather than being parked
    permanent   5 no data, 6 invalid data format, 7 incorrect index, 10 and 11
                (data channel missing or invalid), 12 and 13 (event field required or
                blank), 14 ACK disabled, 15 indexed fields, 16 query-string auth off,
                and any other 4xx

Every request carries `X-Splunk-Request-Channel` (one random channel per process,
unless the spec's headers set one), so a token with indexer acknowledgement turned on
accepts it. When HEC answers with an `ackId`, the batch counts as delivered only once
`/services/collector/ack` says that id was indexed; polled until the rule's deadline,
then retryable (at_least_once sends the batch again: a consumer may see it twice, with
the same rule_seq).
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from .base import REFUSED, Outcome, permanent, retryable

RETRYABLE_CODES: Final = frozenset({1, 2, 3, 4, 8, 9, 18, 19, 20})
PERMANENT_CODES: Final = frozenset({5, 6, 7, 10, 11, 12, 13, 14, 15, 16})
NAMES: Final = {
    1: "token disabled",
    2: "token is required",
    3: "invalid authorization",
    4: "invalid token",
    5: "no data",
    6: "invalid data format",
    7: "incorrect index",
    8: "internal server error",
    9: "server is busy",
    10: "data channel is missing",
    11: "invalid data channel",
    12: "event field is required",
    13: "event field cannot be blank",
    14: "ACK is disabled",
    15: "error in handling indexed fields",
    16: "query string authorization is not enabled",
    18: "HEC is unhealthy",
    19: "HEC is unhealthy",
    20: "HEC is unhealthy",
}
CHANNEL: Final = str(uuid.uuid4())


def answer(body: bytes) -> dict[str, Any]:
    """HEC's JSON answer, or {} when the body is not one."""
    try:
        obj = json.loads(body)
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def refine(outcome: Outcome, status: int, body: bytes) -> Outcome:
    """A failed HTTP outcome made precise by HEC's code (the table above)."""
    code = answer(body).get("code")
    if outcome.accepted or not isinstance(code, int):
        return outcome
    detail = f"HTTP {status}, HEC code {code}"
    if code in NAMES:
        detail += f" ({NAMES[code]})"
    if code in RETRYABLE_CODES:
        return retryable(REFUSED, detail, outcome.retry_after)
    if code in PERMANENT_CODES:
        return permanent(REFUSED, detail)
    return outcome


def ack_url(url: str) -> str | None:
    """`.../services/collector/ack` beside the event endpoint; None when the URL is not
    a HEC path."""
    parts = urlsplit(url)
    at = parts.path.find("/services/collector")
    if at < 0:
        return None
    path = parts.path[: at + len("/services/collector")] + "/ack"
    return urlunsplit((parts.scheme, parts.netloc, path, "channel=" + CHANNEL, ""))


def acked(body: bytes, ack_id: int) -> bool:
    acks = answer(body).get("acks")
    return isinstance(acks, dict) and acks.get(str(ack_id)) is True
