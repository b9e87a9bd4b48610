"""The dispatcher's build loop: spool frames into records, numbered `seq` and appended
to the session's journal, and the build cursor that commits them.

Each complete spool frame not yet built (spoolread.py) is parsed, its payload handed to
the adapter of the agent that wrote it (agents/; a way event to records.py), and the
drafts it yields are staged in the journal; the journal commits every COMMIT_EVERY
frames while a backlog drains, so the workers start on what is built, and calls
`_commit_build` after each append it covers. The build cursor (`build.json`, session.py
says how it survives a SIGKILL) holds the spool position, the journal's end and `seq`,
each builder's state, the replies priced so far and the session's trace.

A failed blocking at_least_once dispatch reaches the spool as a RETRY_EVENT frame (the
hook spools it): it becomes a RETRY_SECTION entry for that rule's worker, never a
record of its own. `Building` is the dispatcher's half that builds; dispatcher.py holds
the lifecycle (lock, serve, finish) and the rule sync.
"""

from __future__ import annotations

from typing import Any

from .. import agents, index, records
from ..agents.protocols import Adapter, Face, HoldsFrames, SessionBuilder
from ..state import events, spool
from ..state.session import Session, read_json, write_json
from ..state.spool import RETRY_EVENT, Entry
from ..traces import context, joined
from . import pricing
from .builders import Builders
from .buildstate import BuildCursor
from .crew import Crew
from .journal import FIRST_SEGMENT, Journal
from .spoolread import Reader

RETRY_SECTION = "__retry__"
# frames built between journal commits when a backlog is drained: each commit writes the
# build cursor (with each builder's state), so fewer commits make a faster drain
# (bench/RESULTS.md, 2026-12-03 16:17), while the workers still start early in it
COMMIT_EVERY = 2048


class Building:
    """The build cursor and one build step; mixed into dispatcher.Dispatcher."""

    session: Session
    journal: Journal
    crew: Crew
    spool: Reader
    ledger: dict[str, Any]
    build: BuildCursor

    def recover(self) -> None:
        """Load the build cursor and cut the journal back to what it committed."""
        self.ledger = self.session.read_ledger()
        raw = read_json(self.session.build)
        kept = self.ledger.get("trackers")  # a session retention.py removed: read on
        if isinstance(raw, dict):
            b = BuildCursor.from_json(raw)
        else:
            b = BuildCursor(
                spool=(FIRST_SEGMENT, 0),
                journal=(FIRST_SEGMENT, 0),
                seq=int(self.ledger.get("seq", 0)),
                trackers=dict(kept) if isinstance(kept, dict) else {},
                traceparent=self.ledger.get("traceparent"),  # a resumed session's trace
                cost=self.ledger.get("cost"),  # its earlier runs' replies, priced
            )
        self.build = b
        self.journal.restore(b.journal, b.seq, b.ended)
        self.builders = Builders(self.session.id, b.trackers, self.spool)
        # per agent: its builder, face, the builder if it holds frames, its adapter
        self._agents: dict[str, tuple[SessionBuilder, Face, HoldsFrames | None, Adapter]] = {}
        self.tally = pricing.Tally(b.cost)  # the session's replies priced so far
        trace = context.normal(b.traceparent)  # a resumed session's: its ledger's
        if trace:  # shared with the blocking path (traces/joined.py)
            trace = joined.settle(self.session.layout, self.session.id, trace)
        self.journal.traceparent = trace

    @property
    def project(self) -> str:
        return self.build.project or index.project_dir()

    # --- building ------------------------------------------------------------------------

    def build_step(self) -> int:
        """Build every complete spool frame not yet built; returns how many."""
        b = self.build
        seg, off = b.spool
        frames, nxt = self.spool.read(seg, off)
        if nxt:  # `seg` is finished: move on, drop it (unless a builder holds a frame)
            b.spool = (nxt, 0)
            self.journal.commit()
            self.builders.drop_spent(nxt)
        if not frames:
            return 0
        if not self.journal.traceparent:  # a blocking rule's hook may have joined (joined.py)
            self.journal.traceparent = joined.read(self.session.layout, self.session.id)
        self.crew.sync(self.project)  # a rule added since the last look sees these records too
        built = 0
        committed = 0
        for start, end, body in frames:
            if built - committed >= COMMIT_EVERY:  # the workers start on what is built
                self.journal.commit()  # the cursor is at the end of the last frame built
                committed = built
            entry = spool.parse_entry(body, seg, off + start)
            b.spool = (seg, off + end)
            if entry is None:
                self.spool.skipped("corrupt", end - start)
                continue
            built += 1
            if not b.project:
                b.project = entry.project
            if entry.traceparent and not self.journal.traceparent:
                self._join(entry)
            payload = records.parse_payload(entry.payload)
            if entry.event == RETRY_EVENT and payload is not None:
                # a finished `record`, or one the hook could not finish (blocking.py)
                kept = {k: v for k, v in payload.items() if k in ("record", "unfinished")}
                retry = {"section": RETRY_SECTION, "retry_for": payload.get("rule"), **kept}
                self.journal.stage(retry)
                continue
            if payload is None:
                events.log(
                    "dispatch.unreadable_payload", session=self.session.id, hook_event=entry.event
                )
                continue
            built_entry = self._drafts(entry, payload)
            if built_entry is None:
                continue
            event, drafts = built_entry
            self.tally.apply(drafts)
            try:
                self.journal.stage_drafts(drafts, entry.project)
            except Exception as exc:  # nesting too deep to encode: never block the spool
                events.log(
                    "dispatch.unencodable_entry",
                    session=self.session.id,
                    hook_event=event,
                    error=type(exc).__name__,
                )
                continue
        self.journal.commit()
        return built

    def _drafts(
        self, entry: Entry, payload: dict[str, Any]
    ) -> tuple[str, list[records.Draft]] | None:
        """(event, drafts) of one entry, built by the adapter of the agent that wrote it
        (a way event: by records.py); None, logged, when it cannot be built."""
        event = entry.event
        try:
            if event == records.WAY_EVENT:  # `ways sensors emit`: ways' own, no agent's
                return event, records.way_event(payload, entry.ts_ns)
            parts = self._agents.get(entry.agent)
            if parts is None:
                builder = self.builders.get(entry.agent)
                face = agents.face(entry.agent)
                if builder is None or face is None:
                    events.log("dispatch.unknown_agent", session=self.session.id, hook_event=event)
                    return None
                holder = self.builders.holding(entry.agent)
                parts = builder, face, holder, agents.adapter(entry.agent)
                self._agents[entry.agent] = parts  # four look-ups once, not per entry
            builder, face, holder, adapter = parts
            if holder is not None:
                holder.at = (entry.segment, entry.offset)
            event = adapter.event_of(payload) or event
            if event == face.END_EVENT:
                self.journal.ended = True
            elif event == face.START_EVENT:
                self.journal.ended = False
            return event, builder.build(event, payload, entry.ts_ns, entry.transcript_size)
        except Exception as exc:
            events.log(
                "dispatch.build_error",
                session=self.session.id,
                hook_event=event,
                error=type(exc).__name__,
            )
            return None

    def _join(self, entry: Entry) -> None:
        """The session joins the client's trace of the first valid $TRACEPARENT its hooks
        carried (traces/context.py), unless a blocking rule's hook joined one first
        (traces/joined.py: then that one); one that is not valid is logged, content-free."""
        valid = context.normal(entry.traceparent)
        layout, sid = self.session.layout, self.session.id
        self.journal.traceparent = joined.settle(layout, sid, valid) if valid else None
        kind = "dispatch.trace_joined" if valid else "dispatch.bad_traceparent"
        events.log(kind, session=self.session.id, size=len(entry.traceparent))

    def _commit_build(self) -> None:
        """Commit the build cursor (the journal calls it after each append it covers)."""
        b, j = self.build, self.journal
        b.journal, b.seq, b.ended = j.end, j.seq, j.ended
        self.builders.save()
        b.cost = self.tally.state()
        b.traceparent = j.traceparent
        write_json(self.session.build, b.as_json())
