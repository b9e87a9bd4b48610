"""Trace and span ids, derived from the session and the record, never random (the
derivation is documented in docs/records.md, Traces)."""

from __future__ import annotations

from typing import Any

from ..sha import sha256_hex
from .context import parse


def _hex(*parts: str, size: int) -> str:
    return sha256_hex("\0".join(parts).encode("utf-8", "surrogatepass"))[: size * 2]


def trace_id(session_id: str, run: str = "") -> str:
    """The trace of a session's first run; a resumed run (`run`: the `seq` of its
    session_start) is a trace of its own, grouped with the others by `session.id`."""
    if run:
        return _hex("ways-trace", session_id, "run", run, size=16)
    return _hex("ways-trace", session_id, size=16)


def span_id(session_id: str, kind: str, key: str = "") -> str:
    return _hex("ways-span", session_id, kind, key, size=8)


def of_record(record: dict[str, Any]) -> tuple[str, str]:
    """(trace id, span id) a record's OTLP log record carries: the session's trace (the
    client's, when the record carries the joined `traceparent`), and the span the record
    is part of (spans.py): its tool call's, its reply's chat span, its subagent's, else
    the root's. So logs and spans of one session line up, with or without a client."""
    sid = str(record.get("session_id") or "")
    client = parse(record.get("traceparent"))
    trace = client[0] if client else trace_id(sid)
    raw = record.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    section = record.get("section")
    tool, agent = data.get("tool_use_id"), record.get("agent_id") or data.get("agent_id")
    if section in ("tool_call", "tool_result") and isinstance(tool, str) and tool:
        return trace, span_id(sid, "tool", tool)
    if section == "assistant_response":
        seq = record.get("seq")
        return trace, span_id(sid, "chat", str(seq if seq is not None else record.get("rule_seq")))
    if isinstance(agent, str) and agent:
        return trace, span_id(sid, "agent", agent)
    return trace, span_id(sid, "root")
