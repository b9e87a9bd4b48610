"""Trace and span ids, derived from the session and the record, never random (the
derivation is documented in docs/records.md, Traces)."""

from __future__ import annotations

import hashlib


def _hex(*parts: str, size: int) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[: size * 2]


def trace_id(session_id: str) -> str:
    return _hex("ways-trace", session_id, size=16)


def span_id(session_id: str, kind: str, key: str = "") -> str:
    return _hex("ways-span", session_id, kind, key, size=8)
