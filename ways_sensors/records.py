"""Section records, agent-neutral: the Draft every adapter builds and the envelope around it.

The record (schema `ways.sensor.record/1`, SPEC section 5):

    {"schema", "section", "seq", "session_id", "agent", "agent_id", "agent_type",
     "timestamp", "project", "hook_event", "prompt_id"?, "traceparent"?, "identity"?,
     "data": {...},
     "test"?,
     then per rule: "sensor", "rule", "rule_seq", "redactions"?, "chain"?}

`agent` names the coding agent whose hook produced the record (the registry name in
agents/: `claude-code`, `codex`, `gemini`, `cursor`, `copilot`); `agent_id` and
`agent_type` name the subagent inside that agent's session. An agent's adapter
(agents/<name>/) turns its hook payloads into Drafts (section, data, agent, time); the
dispatcher numbers them (`seq`), wraps them with `envelope` and adds the rule fields.
Payload fields an adapter's section table does not name are kept whole under
`data.extra`: no whitelist.
`traceparent` is the client's trace the session joined (traces/context.py): the first
valid $TRACEPARENT a hook of the session carried, on every record built after it.
`envelope` bounds how deep `data` nests (depth.py): a value more than DEPTH_MAX levels
down travels as its JSON text.

`way_event` records are not any agent's: `ways sensors emit` spools them as `WayEvent`
entries, built here; they carry the default `agent` (claude-code, where ways runs).
"""

from __future__ import annotations

import _thread  # not threading: the blocking path's imports (dispatch/blocking.py)

from . import jsoncore
from .depth import bounded
from .index import DEFAULT
from .plain import Plain
from .state.events import iso_utc, log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "ways.sensor.record/1"
DEFAULT_AGENT = DEFAULT  # records of entries that name no agent, and way events
WAY_EVENT = "WayEvent"
# the fields `ways sensors emit` (and a hook-shaped input) wrap around a way_event's data
_WAY_EVENT_ENVELOPE = frozenset(
    {"session_id", "hook_event_name", "prompt_id", "agent_id", "agent_type"}
)


class Draft(Plain):
    """One record before the dispatcher numbers it and a rule finishes it."""

    FIELDS = (
        "section",
        "hook_event",
        "timestamp",
        "data",
        "agent_id",
        "agent_type",
        "prompt_id",
        "agent",
    )
    __slots__ = FIELDS

    def __init__(
        self,
        section: str,
        hook_event: str,
        timestamp: str,
        data: dict[str, Any],
        agent_id: str | None = None,
        agent_type: str = "main",  # "main", a subagent's type, or "internal"
        prompt_id: str | None = None,
        agent: str = DEFAULT_AGENT,  # which coding agent's hook produced it
    ) -> None:
        self.section, self.hook_event, self.timestamp, self.data = (
            section,
            hook_event,
            timestamp,
            data,
        )
        self.agent_id, self.agent_type, self.prompt_id, self.agent = (
            agent_id,
            agent_type,
            prompt_id,
            agent,
        )


def way_event(payload: dict[str, Any], ts_ns: int) -> list[Draft]:
    """The way_event record of one `WayEvent` entry: its fields as data, `kind` fired
    unless it says otherwise."""
    agent_id = payload.get("agent_id") or None
    agent_type = (payload.get("agent_type") or "internal") if agent_id else "main"
    prompt_id = payload.get("prompt_id")
    data = {k: v for k, v in payload.items() if k not in _WAY_EVENT_ENVELOPE}
    data.setdefault("kind", "fired")
    return [
        Draft(
            "way_event",
            WAY_EVENT,
            iso_utc(ts_ns),
            data,
            agent_id,
            agent_type,
            prompt_id if isinstance(prompt_id, str) else None,
        )
    ]


def envelope(
    d: Draft,
    seq: int | None,
    session_id: str,
    project: str,
    traceparent: str | None = None,
    identity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The session-level record (without the rule fields); seq None off the spool;
    `identity` the user, install and host (fleet/identity.py)."""
    rec: dict[str, Any] = {
        "schema": SCHEMA,
        "section": d.section,
        "seq": seq,
        "session_id": session_id,
        "agent": d.agent,
        "agent_id": d.agent_id,
        "agent_type": d.agent_type,
        "timestamp": d.timestamp,
        "project": project,
        "hook_event": d.hook_event,
    }
    if d.prompt_id:
        rec["prompt_id"] = d.prompt_id
    if traceparent:
        rec["traceparent"] = traceparent
    if identity:
        rec["identity"] = identity
    rec["data"] = bounded(d.data)  # depth.py: no stage after this recurses past its bound
    return rec


def parse_payload(raw: bytes) -> dict[str, Any] | None:
    """A spooled payload as a JSON object, read the way the hook's scan reads it
    (hook.string_field); None when it is not one.

    UTF-8 only (a leading BOM is skipped; lone surrogates pass, as json's own bytes
    decoding lets them): the scan reads UTF-8 bytes, and a payload in another encoding
    could show it keys json never sees. A top-level object that repeats a key is
    refused and logged (`payload.repeated_key`, content-free): json keeps the last
    occurrence, the hook routed by the first, and a record routed by one and built from
    the other must never exist (issue 12). Repeats inside nested objects are the
    payload's content and stay json's (the last wins).
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    _last.repeats = False
    try:
        obj = _decode(raw.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(obj, dict):
        return None
    if _last.repeats:
        log("payload.repeated_key", keys=len(obj))
        return None
    return obj


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(items)
    _last.repeats = len(obj) != len(items)  # the last object built is the top-level one
    return obj


def _finite(text: str) -> float | None:
    """A JSON number as a float, None when it is not finite (1e999 overflows to inf)."""
    value = float(text)
    return value if value - value == 0 else None


_last = _thread._local()  # whether the object _pairs built last repeated a key
# one decoder for every payload (json.loads with a hook makes a new one per call). NaN,
# Infinity and -Infinity are not JSON, but Python's parser takes them: read as null
# (what JSON writers make of them, msgspec's among them), as is a number too large for
# a float. Kept as floats, the consumer got null while the chain hashed NaN: a false
# "broken (edited)" from verify.
_decode = jsoncore.Decoder(
    object_pairs_hook=_pairs, parse_constant=lambda _: None, parse_float=_finite
).decode
