"""Builder scaffolding the agents' builders share.

A session file is the agent's file at a path the payload names: reading it can fail (a
FIFO, /dev/zero, a file gone unreadable) or skip a line too long to hold. Either costs
only what the file would have added: `guarded` catches the failure, logs it
content-free (`transcript.unreadable` with the error's class, or
`transcript.line_too_long` with a count; never the path or a line), and the records
the payload makes by itself are built all the same.
"""

from __future__ import annotations

from ...state import events
from .sessionfile import ReadStats

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    T = TypeVar("T")

    Extra = Callable[[dict[str, Any], set[str]], dict[str, Any]]  # the builder's data.extra


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


# --- the data of the records every agent makes the same way (SPEC section 5) ---------------


def session_start(p: dict[str, Any], extra: Extra, model: bool = True) -> dict[str, Any]:
    """A session_start's data: `source`, and `model` when the agent's payload has one."""
    if not model:
        return {"source": p.get("source"), "model": None, "extra": extra(p, {"source"})}
    data = {"source": p.get("source"), "model": p.get("model")}
    return {**data, "extra": extra(p, {"source", "model"})}


def session_end(p: dict[str, Any], extra: Extra) -> dict[str, Any]:
    """A session_end's data: the `reason` the agent gave."""
    return {"reason": p.get("reason"), "extra": extra(p, {"reason"})}


def compaction(p: dict[str, Any], extra: Extra, phase: str = "before") -> dict[str, Any]:
    """A compaction's data before it (with the user's `custom_instructions`) or after."""
    if phase == "before":
        used = {"trigger", "custom_instructions"}
        instructions = p.get("custom_instructions")
    else:
        used, instructions = {"trigger"}, None
    return {
        "phase": phase,
        "trigger": p.get("trigger"),
        "instructions": instructions,
        "extra": extra(p, used),
    }
