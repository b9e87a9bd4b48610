"""A session's builders: one per agent whose entries reach its spool (agents/), made at
that agent's first entry from its saved state (build.json's `trackers`, session.py),
and the spool segments a builder holds a frame in (agents.protocols.HoldsFrames: a
parked Codex result is kept as where its frame sits, never as its output)."""

from __future__ import annotations

from typing import Any

from .. import agents
from ..agents.protocols import HoldsFrames, SessionBuilder
from ..state import events
from .spoolread import Reader


class Builders:
    """The dispatcher's builders, per agent; `trackers` is the build cursor's table of
    their states, read at a builder's making and written back by `save`."""

    def __init__(self, session_id: str, trackers: dict[str, Any], spool: Reader) -> None:
        self.session_id = session_id
        self.trackers = trackers
        self.spool = spool
        self.made: dict[str, SessionBuilder] = {}
        # each made builder that holds frames, decided once at its making: a runtime
        # Protocol check (isinstance) is too slow for every entry built (bench/RESULTS.md,
        # Traces)
        self.holders: dict[str, HoldsFrames] = {}

    def get(self, agent: str) -> SessionBuilder | None:
        """The session's builder for `agent`'s entries, resumed from its saved state;
        None for an agent this version does not know."""
        builder = self.made.get(agent)
        if builder is None and agent in agents.AGENTS:
            builder = agents.adapter(agent).new_builder(self.trackers.get(agent))
            self.made[agent] = builder
            if isinstance(builder, HoldsFrames):
                self.holders[agent] = builder
                gone = builder.restore(self.spool.held)
                if gone:
                    events.log("dispatch.held_frames_gone", session=self.session_id, count=gone)
        return builder

    def holding(self, agent: str) -> HoldsFrames | None:
        """The agent's builder, made already, if it holds frames (HoldsFrames)."""
        return self.holders.get(agent)

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
            if isinstance(builder, HoldsFrames):
                held |= builder.held()
        self.spool.drop_spent(segment, held)

    def save(self) -> None:
        """Each made builder's state into `trackers` (the build cursor commits it)."""
        for agent, builder in self.made.items():
            self.trackers[agent] = builder.state()
