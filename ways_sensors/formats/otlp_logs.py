"""A record as an OTLP/JSON LogRecord (the otlp target's `signal: logs`; targets/otlp.py
draws the whole request, otlp_json.py or otlp_protobuf.py makes its bytes): its body the
record as canonical JSON, its attributes the OpenTelemetry and GenAI names the record's
fields map to, its severity the record's level (severity.py), its trace and span the
session's (traces/ids.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from ..state.events import unix_nano
from ..traces import ids
from ..traces.context import parse
from .severity import OTEL, level


def text(v: str) -> str:
    """A string UTF-8 can carry: a lone surrogate (from a hostile payload) becomes '?'."""
    try:
        v.encode("utf-8")
        return v
    except UnicodeEncodeError:
        return v.encode("utf-8", "replace").decode("utf-8")


def _value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue for a scalar (ints as decimal strings, per the JSON mapping)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": text(v if isinstance(v, str) else json.dumps(v, default=str))}


def attributes(pairs: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in pairs if v is not None and v != ""]


def body_of(record: dict[str, Any]) -> str:
    """The record as canonical JSON (sorted keys, no spaces), its chain field included:
    what `ways sensors verify` checks, so a consumer can still verify the chain. A record
    holding a lone surrogate is written ASCII-escaped, which parses back to the same record.
    msgspec writes it (a float may read `1e16` where json writes `1e+16`: the same number),
    json what msgspec refuses."""
    try:
        return _sorted.encode(record).decode("utf-8")
    except Exception:
        pass
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


_sorted = msgspec.json.Encoder(order="sorted")


def log_record(record: dict[str, Any], observed: int, joined: str | None = None) -> dict[str, Any]:
    section = record.get("section")
    data = _data if isinstance(_data := record.get("data"), dict) else {}
    sid = record.get("session_id")
    pairs: list[tuple[str, Any]] = [
        ("session.id", sid),
        ("gen_ai.conversation.id", sid),
        ("prompt.id", record.get("prompt_id")),
    ]
    if record.get("agent_id"):  # a subagent's record
        pairs += [
            ("gen_ai.agent.id", record["agent_id"]),
            ("gen_ai.agent.name", record.get("agent_type")),
        ]
    if section in ("tool_call", "tool_result"):
        pairs += [
            ("gen_ai.tool.name", data.get("tool_name")),
            ("gen_ai.tool.call.id", data.get("tool_use_id")),
        ]
    pairs += [
        ("ways.agent.name", record.get("agent")),
        ("ways.sensor", record.get("sensor")),
        ("ways.rule", record.get("rule")),
        ("ways.rule_seq", record.get("rule_seq")),
        ("ways.seq", record.get("seq")),
        ("ways.section", section),
        ("ways.hook_event", record.get("hook_event")),
        ("ways.test", True if record.get("test") else None),
    ]
    number, name = OTEL[level(record)]
    out: dict[str, Any] = {}
    when = unix_nano(record.get("timestamp"))
    if when:
        out["timeUnixNano"] = str(when)
    trace, span = ids.of_record(record)
    if joined and section == "checkpoint" and not record.get("traceparent"):
        client = parse(joined)  # a checkpoint is built apart: the session's trace, not its own
        trace = client[0] if client else trace
    out.update(
        {
            "observedTimeUnixNano": str(observed),
            "traceId": trace,
            "spanId": span,
            "severityNumber": number,
            "severityText": name,
            "eventName": f"ways.sensor.{section}",
            "body": {"stringValue": body_of(record)},
            "attributes": attributes([(k, v) for k, v in pairs if isinstance(v, (str, int, bool))]),
        }
    )
    return out


def otel_attributes(identity: Any) -> dict[str, Any]:
    """OpenTelemetry's user.*, enduser.id and host.id of a record's identity, and
    ways.install.id and ways.user.team (the OTLP target's resource)."""
    if not isinstance(identity, dict):
        return {}
    user = identity.get("user")
    user = user if isinstance(user, dict) else {}
    host = identity.get("host")
    host = host if isinstance(host, dict) else {}
    out: dict[str, Any] = {
        "user.id": user.get("id"),
        "enduser.id": user.get("id"),
        "user.email": user.get("email"),
        "user.full_name": user.get("name"),
        "ways.user.team": user.get("team"),
        "host.id": host.get("id"),
        "host.name": host.get("name"),
        "ways.install.id": identity.get("install_id"),
    }
    out = {k: str(v) for k, v in out.items() if v}
    groups = user.get("groups")
    if isinstance(groups, list) and groups:
        out["user.roles"] = [str(g) for g in groups]
    return out
