"""A session's builders: one per agent whose entries reach its spool (agents/), made at
that agent's first entry from its saved state (build.json's `trackers`, session.py),
and the spool segments a builder holds a frame in (agents.protocols.HoldsFrames: a
parked Codex result is kept as where its frame sits, never as its output)."""

from __future__ import annotations

from typing import Any, TypeGuard

from . import agents, events
from .agents.protocols import HoldsFrames, SessionBuilder
from .spoolread import Reader


class Builders:
    """The dispatcher's builders, per agent; `trackers` is the build cursor's table of
    their states, read at a builder's making and written back by `save`."""

    def __init__(self, session_id: str, trackers: dict[str, Any], spool: Reader) -> None:
        self.session_id = session_id
        self.trackers = trackers
        self.spool = spool
        self.made: dict[str, SessionBuilder] = {}

    def get(self, agent: str) -> SessionBuilder | None:
        """The session's builder for `agent`'s entries, resumed from its saved state;
        None for an agent this version does not know."""
        builder = self.made.get(agent)
        if builder is None and agent in agents.AGENTS:
            builder = agents.adapter(agent).new_builder(self.trackers.get(agent))
            self.made[agent] = builder
            if holds_frames(builder):
                gone = builder.restore(self.spool.held)
                if gone:
                    events.log("dispatch.held_frames_gone", session=self.session_id, count=gone)
        return builder

    def drop_spent(self, segment: str) -> None:
        """The spool segments before `segment` (the build cursor's) go, but those a
        builder holds a frame in (each agent's builder is made now, so none is dropped
        unread)."""
        held: set[str] = set()
        for agent in list(self.trackers):
            try:
                builder = self.get(agent)
            except Exception:  # logged at its entries (dispatch.build_error): keep them all
                return
            if holds_frames(builder):
                held |= builder.held()
        self.spool.drop_spent(segment, held)

    def save(self) -> None:
        """Each made builder's state into `trackers` (the build cursor commits it)."""
        for agent, builder in self.made.items():
            self.trackers[agent] = builder.state()


_holds: dict[type, bool] = {}


def holds_frames(builder: object) -> TypeGuard[HoldsFrames]:
    """isinstance(builder, HoldsFrames), decided once per builder class: isinstance of a
    runtime-checkable Protocol walks the protocol's members on every call (tens of
    microseconds: a sixth of the build loop's time per record in a drain profile)."""
    kind = type(builder)
    got = _holds.get(kind)
    if got is None:
        got = _holds[kind] = isinstance(builder, HoldsFrames)
    return got
