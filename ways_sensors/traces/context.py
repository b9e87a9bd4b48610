"""The client's trace context (W3C Trace Context `traceparent`), as the hook received it.

Claude Code, with its tracing on, gives every hook process `TRACEPARENT` (the active
span's context: `00-<trace-id, 32 hex>-<parent-id, 16 hex>-<flags, 2 hex>`). The hook
copies it, when its shape is right, into the spool frame of the event it hands off
(hook.py, spool.py); the dispatcher keeps the first valid one of a session in the build
cursor (and in joined.py's file, which a blocking rule's hook reads and may write
first) and stamps it on every record built after it (`traceparent` in the envelope,
docs/records.md). The spans of the session then join that trace (its trace id; the
root span parented under the client's span) and every OTLP log record carries its
trace id, so logs and spans of one session line up (docs/otlp.md, Joining the client's
trace).

Parsed strictly, as the specification says a receiver must: version 00 (a later
version's first 55 characters, read as 00's fields), lowercase hex, neither id all
zeros, version ff refused. Anything else is no context: the session keeps its own
trace id (ids.py), never a half-read one.
"""

from __future__ import annotations

_HEX = frozenset("0123456789abcdef")
SIZE = 55  # "00-" + 32 + "-" + 16 + "-" + 2


def parse(value: object) -> tuple[str, str] | None:
    """(trace id, parent span id) of a `traceparent` value, or None when it is not one."""
    if not isinstance(value, str) or len(value) < SIZE:
        return None
    version, trace, parent, flags = value[:2], value[3:35], value[36:52], value[53:55]
    if value[2] != "-" or value[35] != "-" or value[52] != "-":
        return None
    if not _HEX.issuperset(version + trace + parent + flags) or version == "ff":
        return None
    if version == "00" and len(value) != SIZE:
        return None
    if len(value) > SIZE and value[SIZE] != "-":  # a later version adds "-..." fields
        return None
    if trace == "0" * 32 or parent == "0" * 16:
        return None
    return trace, parent


def normal(value: object) -> str | None:
    """The value as the record carries it (its version-00 part), None when invalid."""
    got = parse(value)
    if got is None or not isinstance(value, str):
        return None
    return value[:SIZE]
