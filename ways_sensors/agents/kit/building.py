"""Builder scaffolding the agents' builders share.

A session file is the agent's file at a path the payload names: reading it can fail (a
FIFO, /dev/zero, a file gone unreadable) or skip a line too long to hold. Either costs
only what the file would have added: `guarded` catches the failure, logs it
content-free (`transcript.unreadable` with the error's class, or
`transcript.line_too_long` with a count; never the path or a line), and the records
the payload makes by itself are built all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ... import events
from .sessionfile import ReadStats

T = TypeVar("T")


def guarded(payload: Mapping[str, Any], stats: ReadStats, read: Callable[[], T], failed: T) -> T:
    """`read()` of the session file, or `failed` when it raises, logged content-free."""
    before = stats.too_long
    session = payload.get("session_id")
    session = session if isinstance(session, str) and len(session) <= 128 else None
    try:
        return read()
    except Exception as exc:
        events.log("transcript.unreadable", session=session, error=type(exc).__name__)
        return failed
    finally:
        if stats.too_long > before:
            events.log("transcript.line_too_long", session=session, lines=stats.too_long - before)
