"""One rule's worker: it delivers the rule's records from the journal, in order, a batch
per attempt.

Each enabled async rule (and each blocking at_least_once rule, for the hook's failed
dispatches: blocking.redelivered) has its own worker, so one stuck consumer never delays
another. What a batch takes, how long it lingers, and a record that cannot be finished:
collect.py.

It reads ahead of its cursor (readahead.py: best_effort's queue_cap applies there),
matches, numbers, masks and chains each record (pipeline/stages.py), commits the batch
(below), then makes one attempt for the whole batch through delivery.py under the
rule's timeout; a retryable failure backs off and tries the whole batch again.

Its cursor (cursor.py: what it holds, group commit, what survives a SIGKILL; a line
of the session's cursor log, cursorlog.py) moves past a batch, numbers, chains and
makes it pending in one step; `pending` is cleared once the rule is done with it. A
move past records this rule does not take is saved lazily (at most every
POSITION_EVERY seconds, at a new segment, at exit).

A worker is handed the session's journal (journal.py: read from a cursor, wait for
growth), the session's paths and its rule, never the dispatcher; its time comes from a
`Clock`, so a test can run it in-process, a step at a time, on a clock of its own. It
holds a thread only while it has work (ondemand.py): an idle worker holds none, and the
dispatcher's poke after a commit starts one; it never polls.

A reload never waits for a delivery: the old worker is retired (`retire`), ends its
attempt in flight under the rule's timeout, saves its cursor and exits; its successor
(`after`) waits for that in its own thread and starts from that cursor: never two
attempts in flight for a rule, a pending batch handed over on disk, as after a SIGKILL.
"""

from __future__ import annotations

from typing import Any

from ..config.rules import LoadedRule
from ..pipeline import delivery, unfinished
from ..pipeline.stages import dumps
from ..state import counters, events, taps
from ..state.cursorstate import Cursor
from ..state.session import Session
from ..targets.timing import batch_for
from . import refinish
from .collect import Collecting
from .cursor import Batch, encode_batch, load_cursor
from .journal import Clock, Journal
from .ondemand import OnDemand
from .readahead import ReadAhead

POSITION_EVERY = 1.0  # seconds between saves of a move past records the rule does not take
NAP = 60.0  # after a worker's error: its longest wait before it tries again


class Worker(Collecting, OnDemand):
    """Delivers one rule's records from the journal, in order, a batch per attempt; in
    a thread of its own while it has work (ondemand.py)."""

    def __init__(
        self,
        journal: Journal,
        session: Session,
        rule: LoadedRule,
        after: Worker | None = None,
        clock: Clock | None = None,
    ):
        super().__init__(f"rule {rule.label}")
        self.journal = journal
        self.session = session
        self.clock = clock or Clock()
        self.rule = rule
        self.rid = rule.key
        self.tally = counters.Tally(self.rid, session.layout)
        self.cursors = session.cursor_log()  # the session's, shared (cursorlog.py)
        self.max_records, self.max_delay = batch_for(rule.spec.dispatch.kind, rule.spec.batch)
        self.lines: list[bytes] | None = None  # the pending records' JSON, when known
        self.saved_at = 0.0
        self.saved_position = ("", -1)
        self.after = after  # the rule's retired worker, maybe still in an attempt
        self.deactivate_on_exit = False
        self.sealer = _sealer(session, rule, self.tally)  # chain: true only
        self.budget0 = unfinished.mask_budget(rule, 0)  # a first try's: once, not per record
        # until `after` exits its cursor is its own: read it, never write it
        self.state: Cursor = after.state if after is not None else self._load_state()
        self.retrying = False  # a consumer that refused for now: backing off (delivery.py)
        self.failing = False  # the last step raised: it is tried again after a pause
        self.held: tuple[str, int] | None = None  # (cause, tries) of the record held back
        self.hold_backoff = delivery.BACKOFF_FIRST
        self.collecting = False  # records taken from the journal, not yet committed
        self.last_sent = float("-inf")  # when the previous batch was done with
        self.redelivers = rule.spec.mode == "blocking"  # only the hook's failed dispatches
        self.ahead = ReadAhead(journal, rule, not self.redelivers, self._log)
        self.ahead.rewind(*self.state.position)

    # --- state ----------------------------------------------------------------------

    def _load_state(self) -> Cursor:
        s, got = self.session, self.cursors.load(self.rid)

        def head() -> tuple[int, str] | None:  # read only when the cursor is new
            return s.layout.ledger_head(s.id, self.rule.sensor, self.rule.name)

        st = load_cursor(got, self.journal.end, head)
        if st.unreadable:
            self._log("dispatch.cursor_batch_unreadable")  # removed or mangled by hand
        if self.sealer is not None:
            self.sealer.restore(st)  # the rule's Merkle tree, as the cursor left it
        if self.rule.spec.mode != "blocking":  # a kill before the last commit's counts
            counters.uncounted(self.tally, s.id, st)
        self._save(st)
        return st

    def _save(self, st: Cursor | None = None) -> None:
        st = st or self.state
        pending = st.pending or []
        self.cursors.save(self.rid, st.as_json(), lambda: encode_batch(pending, self.lines))
        self.saved_at = self.clock.now()
        self.saved_position = st.position

    # --- the loop ---------------------------------------------------------------------

    def retire(self, deactivate: bool) -> None:
        """Stop, not waiting for an attempt in flight; `deactivate`: the rule is gone."""
        self.deactivate_on_exit = deactivate
        self.halt()

    def burst(self) -> None:
        """Work until nothing is left to do (ondemand.py ends the thread then)."""
        if self.after is not None:
            self.after.join()  # in this thread: the main thread never waits for a delivery
            self.state = self._load_state()  # where the old worker left it, pending included
            self.lines = None
            self._rewind()
            self.after = None
        try:
            self._loop()
        finally:
            self.tally.flush()
            delivery.close(self.rule)  # the target's hold on this thread (http's loop)

    def last(self) -> None:
        if self.after is not None:
            return  # never started: the retired worker's cursor is not ours to write
        moved = self.state.position != self.saved_position
        if self.deactivate_on_exit:
            self.state.active = False  # the rule is gone
        if self.deactivate_on_exit or moved:  # or a lazily saved move past records
            self._save()
        self.tally.flush()

    def _loop(self) -> None:
        while not self.stop.is_set():
            seen = self.journal.generation
            try:
                more = self.step()
                self.failing = False
                if not more:
                    return  # nothing to do: a commit pokes it again
            except Exception as exc:  # a bug must not kill the rule silently
                self._log("dispatch.worker_error", error=type(exc).__name__)
                self._rewind()
                # a step that fails again and again (a refused state path) holds the
                # dispatcher no longer than a consumer that is down: it may leave
                self.failing = True
                self.clock.sleep(self.stop, 1.0)
                self.journal.wait(seen, self.stop, NAP)  # then again, when it grows

    def _log(self, kind: str, **fields: object) -> None:
        """One content-free events.log line about this rule in this session."""
        r = self.rule
        events.log(kind, sensor=r.sensor, rule=r.name, session=self.session.id, **fields)

    def _rewind(self) -> None:
        """Forget what was read ahead: the next step reads again from the cursor."""
        self.collecting = False
        self.ahead.rewind(*self.state.position)

    def step(self) -> bool:
        if self.state.pending:
            self._deliver_pending()
            return True
        b = self._collect()
        if b is None and self.sealer is not None and self.sealer.wants(self.clock.now()):
            b = Batch(self.state)  # a checkpoint of its own: due, or the tree's end (crew.py)
        if b is not None:
            self._commit(b)
            if self.state.pending:
                self._deliver_pending()
        if self.held is not None and not self.stop.is_set():
            self._after_hold()
            return True
        return b is not None

    def _commit(self, b: Batch) -> None:
        """Make the batch the cursor: moved past, numbered, chained and pending, in one
        atomic write (lazily when it only moves past records the rule does not take)."""
        st = self.state.fork()  # self.state until saved (cursor.fork says why)
        if self.sealer is not None:  # the batch's leaves, and its signed checkpoint if due
            cp = self.sealer.close_batch(b.records, st, self.clock.now())
            if cp is not None:
                b.add(cp, dumps(cp))
        new_segment = b.segment != st.segment
        st.segment, st.offset = b.segment, b.offset
        st.rule_seq, st.hash = b.rule_seq, b.hash
        st.pending = b.records or None
        st.finished_as = refinish.fingerprint(self.rule) if b.records else None
        if b.records or b.drops or new_segment or self.clock.now() - self.saved_at > POSITION_EVERY:
            try:
                self._save(st)
            except BaseException:
                if self.sealer is not None:
                    self.sealer.rollback(self.state)  # the batch is collected again
                raise
        self.state, self.lines, self.collecting = st, b.lines or None, False
        if self.sealer is not None:
            self.sealer.persist()
        done = {"dispatched": b.numbered, "drops": b.drops, "redactions": b.redactions}
        counters.committed(
            self.tally, self.session.id, None if self.redelivers else b.rule_seq, done
        )
        self.tally.flush()  # with the commit, not on a timer: a kill must not lose them

    def _deliver_pending(self) -> None:
        """Deliver the pending batch until the rule is done with it (delivery.settle):
        accepted, lost (best_effort) or parked (permanent); otherwise back off and retry."""
        recs = self.state.pending or []
        if refinish.stale(self.state, self.rule):  # finished under an older rule
            sealed = list(recs)  # their leaves are the tree's last ones
            if not refinish.again(self.rule, self.state, self.session.id, self.tally):
                self.retrying = True  # a refused key, a full disk: the batch waits as it is
                self.clock.sleep(self.stop, delivery.BACKOFF_CAP)
                return
            if self.sealer is not None:
                self.sealer.reseal(self.state, sealed, self.clock.now())  # a new checkpoint
            self.lines, recs = None, self.state.pending or []
            self._save()
            if self.sealer is not None:
                self.sealer.persist()
            if not recs:
                return
        if self.lines is None or len(self.lines) != len(recs):
            self.lines = [dumps(r) for r in recs]  # a batch left pending by a killed dispatcher
        taps.offer(self.rule.label, self.lines, self.session.layout.root)
        settled = delivery.until_settled(
            self.rule,
            recs,
            self.lines,
            session=self.session.id,
            tally=self.tally,
            sleep=lambda seconds: self.clock.sleep(self.stop, seconds),
            retrying=lambda now: setattr(self, "retrying", now),
        )
        if not settled:
            return  # stopped: leave it pending on disk for the next dispatcher
        if self.sealer is not None:  # its checkpoints, into the machine log
            from ..evidence import machinelog

            machinelog.settled(self.session.layout, recs, self.tally)
        self.state.pending = None
        self.lines = None
        self._save()
        self.last_sent = self.clock.now()

    def done(self) -> bool:
        """Nothing left to deliver: at the committed journal end, nothing pending."""
        if self.after is not None:
            return False  # waiting for the retired worker's attempt
        seg, size = self.journal.end
        st = self.state
        return (
            not st.pending
            and not self.collecting
            and not self.ahead.buffer
            and st.position >= (seg, size)
        )

    @property
    def backing_off(self) -> bool:
        """Waiting to try again: a consumer that refused for now, or a step that raised."""
        return self.retrying or self.failing

    @property
    def idle(self) -> bool:
        closing = self.sealer is not None and self.sealer.closing  # crew.close_trees
        return self.backing_off or (self.done() and not closing)

    @property
    def owes(self) -> bool:
        """Records this rule still has to deliver (at_least_once only keeps a debt)."""
        if not self.rule.at_least_once:
            return False
        return not self.done()


def _sealer(session: Session, rule: LoadedRule, tally: counters.Tally) -> Any:
    """A chained rule's tree signer (evidence/sealer.py); none for the hook's (blocking)."""
    if not rule.spec.chain or rule.spec.mode == "blocking":
        return None
    from ..evidence import cadence

    if not cadence.configured().checkpoints:  # the chain alone (docs/evidence.md)
        return None
    from ..evidence.sealer import for_rule  # cryptography: only a chaining rule pays for it

    return for_rule(session, rule, tally)
