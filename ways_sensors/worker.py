"""One rule's worker: it delivers the rule's records from the journal, in order, a batch
per attempt.

Each enabled async rule (and each blocking at_least_once rule, for the hook's failed
dispatches: blocking.redelivered) has its own worker, so one stuck consumer never delays
another. A batch holds up to the rule's `max_records` (timing.batch_for) and BATCH_BYTES,
taking the records already in the journal at once; one that is not full waits for more
only while the rule is busy (its previous batch ended less than `max_delay` ago) and
each record comes within LINGER_GAP of the one before, never past `max_delay` after its
first. A quiet rule sends its next record at once: no latency for an idle session.

It reads ahead of its cursor (readahead.py: best_effort's queue_cap applies there),
matches, numbers, masks and chains each record (pipeline.py), commits the batch
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

import time
from typing import Any

from . import blocking, counters, delivery, events, refinish, unfinished
from .cursor import Batch, encode_batch, load_cursor
from .journal import Clock, Journal
from .ondemand import OnDemand
from .pipeline import dumps, finish, match
from .readahead import ReadAhead
from .rules import LoadedRule
from .services import tap  # `ways sensors tap`: the batch as the target gets it
from .session import Session
from .timing import batch_for

BATCH_BYTES = 4 << 20  # a batch stops growing here (a larger record still goes alone)
LINGER_GAP = 0.01  # a lingering batch closes when no record came for this long
POSITION_EVERY = 1.0  # seconds between saves of a move past records the rule does not take
NAP = 60.0  # after a worker's error: its longest wait before it tries again


class Worker(OnDemand):
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
        self.state: dict[str, Any] = after.state if after is not None else self._load_state()
        self.retrying = False
        self.held: tuple[str, int] | None = None  # (cause, tries) of the record held back
        self.hold_backoff = delivery.BACKOFF_FIRST
        self.collecting = False  # records taken from the journal, not yet committed
        self.last_sent = float("-inf")  # when the previous batch was done with
        self.redelivers = rule.spec.mode == "blocking"  # only the hook's failed dispatches
        self.ahead = ReadAhead(journal, rule, not self.redelivers, self._log)
        self.ahead.rewind(self.state["segment"], self.state["offset"])

    # --- state ----------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        s, got = self.session, self.cursors.load(self.rid)
        if got is not None and got.pop("unreadable", False):
            self._log("dispatch.cursor_batch_unreadable")  # removed or mangled by hand
        head = lambda: s.layout.ledger_head(s.id, self.rule.sensor, self.rule.name)  # noqa: E731
        st = load_cursor(got, self.journal.end, head)
        if self.sealer is not None:
            self.sealer.restore(st)  # the rule's Merkle tree, as the cursor left it
        self._save(st)
        return st

    def _save(self, st: dict[str, Any] | None = None) -> None:
        st = st or self.state
        self.cursors.save(self.rid, st, lambda: encode_batch(st["pending"], self.lines))
        self.saved_at = self.clock.now()
        self.saved_position = (st["segment"], st["offset"])

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
        moved = (self.state["segment"], self.state["offset"]) != self.saved_position
        if self.deactivate_on_exit:
            self.state["active"] = False  # the rule is gone
        if self.deactivate_on_exit or moved:  # or a lazily saved move past records
            self._save()
        self.tally.flush()

    def _loop(self) -> None:
        while not self.stop.is_set():
            seen = self.journal.generation
            try:
                if not self.step():
                    return  # nothing to do: a commit pokes it again
            except Exception as exc:  # a bug must not kill the rule silently
                self._log("dispatch.worker_error", error=type(exc).__name__)
                self._rewind()
                self.clock.sleep(self.stop, 1.0)
                self.journal.wait(seen, self.stop, NAP)  # then again, when it grows

    def _log(self, kind: str, **fields: object) -> None:
        """One content-free events.log line about this rule in this session."""
        r = self.rule
        events.log(kind, sensor=r.sensor, rule=r.name, session=self.session.id, **fields)

    def _rewind(self) -> None:
        """Forget what was read ahead: the next step reads again from the cursor."""
        self.collecting = False
        self.ahead.rewind(self.state["segment"], self.state["offset"])

    def step(self) -> bool:
        if self.state.get("pending"):
            self._deliver_pending()
            return True
        b = self._collect()
        if b is None and self.sealer is not None and self.sealer.wants(self.clock.now()):
            b = Batch(self.state)  # a checkpoint of its own: due, or the tree's end (crew.py)
        if b is not None:
            self._commit(b)
            if self.state.get("pending"):
                self._deliver_pending()
        if self.held is not None and not self.stop.is_set():
            self._after_hold()
            return True
        return b is not None

    def _after_hold(self) -> None:
        """The record at the head could not be finished (unfinished.py): park it
        withheld, or back off and let the next step try it again."""
        cause, tries = self.held  # type: ignore[misc]
        if unfinished.park_now(cause, tries):
            self._park_withheld(cause)
            return
        self.tally.count("retries")
        self._log("dispatch.record_held", cause=cause, tries=tries)
        self.retrying = True
        self._rewind()
        if not self.clock.sleep(self.stop, self.hold_backoff):
            self.hold_backoff = min(self.hold_backoff * 2, delivery.BACKOFF_CAP)

    def _park_withheld(self, cause: str) -> None:
        """Park the held record with its data withheld, numbered and chained in order."""
        seg, end, rec = self.ahead.buffer.pop()
        b = Batch(self.state)
        b.segment, b.offset, b.moved = seg, end, True
        self.held, self.retrying = None, False
        self.hold_backoff = delivery.BACKOFF_FIRST
        sid, seq = self.session.id, b.rule_seq + 1
        if self.redelivers:  # one the hook could not finish: numbered in its head
            parked = blocking.park_withheld(self.rule, self.session, rec, cause, self.tally)
            seq, h = b.rule_seq, (b.hash if parked else None)
        else:
            h = unfinished.park(self.rule, rec, cause, seq, b.hash, sid, self.tally)
        if h is None:
            self._rewind()  # a full disk: held again, tried again
            self.clock.sleep(self.stop, delivery.BACKOFF_CAP)
            return
        b.rule_seq, b.hash = seq, h
        self._commit(b)

    def _collect(self) -> Batch | None:
        """Take records into a batch (the module docstring says how many, how long);
        None when there was nothing to move past, or the worker is stopping."""
        b = Batch(self.state)
        first_at = last_at = 0.0  # when the batch got its first record, its latest
        linger = False
        while not self.stop.is_set():
            seen = self.journal.generation  # before looking: a commit after it wakes us
            if not self.ahead.buffer and not self.ahead.refill():
                if not b.records or not linger:
                    break
                left = min(first_at + self.max_delay, last_at + LINGER_GAP) - self.clock.now()
                if left <= 0:
                    break
                self.journal.wait(seen, self.stop, left)
                continue
            seg, end, rec = self.ahead.buffer.pop()
            before = (b.segment, b.offset, b.moved)
            b.segment, b.offset, b.moved = seg, end, True
            self.collecting = True
            had = len(b.records)
            if not self._take(b, rec):  # held: the batch ends before it (unfinished.py)
                b.segment, b.offset, b.moved = before
                self.ahead.buffer.append((seg, end, rec))
                break
            if len(b.records) > had:
                last_at = self.clock.now()
                if not had:
                    first_at = last_at
                    linger = self.max_delay > 0 and first_at - self.last_sent < self.max_delay
            if len(b.records) >= self.max_records or b.size >= BATCH_BYTES:
                break
        if self.stop.is_set():
            return None  # nothing committed: the next dispatcher collects them again
        return b if b.moved else None

    def _take(self, b: Batch, rec: Any) -> bool:
        """Add one journal entry to the batch: number, mask and chain it if it is the
        rule's; count a drop; skip anything else. False: an at_least_once record that
        cannot be finished now is held (`held`; unfinished.py says what follows)."""
        if rec == "drop":
            b.rule_seq += 1  # the consumer sees the gap
            b.drops += 1
            return True
        tries = self.held[1] if self.held else 0
        try:
            if self.redelivers:  # the hook's failed dispatches, numbered in its head
                if not isinstance(rec, dict) or rec.get("retry_for") != self.rid:
                    return True
                got = blocking.redelivered(self.rule, self.session, rec, tries)
                out, h = got or {}, b.hash
            elif rec is None or not match(self.rule, rec):
                return True
            else:
                budget = unfinished.mask_budget(self.rule, tries) if tries else self.budget0
                out, h = finish(
                    rec,
                    self.rule,
                    b.rule_seq + 1,
                    b.hash,
                    # real time: masking's own bound, never the rule's timeout (unfinished.py)
                    deadline=time.monotonic() + budget,
                )
            line = dumps(out)
        except Exception as exc:  # a mask overrun, a refused key, a hostile shape
            if self.rule.spec.delivery == "at_least_once":
                self.held = (unfinished.cause_of(exc), tries + 1)
                return False
            self.tally.count("lost")  # best_effort: as a failed attempt would be
            self._log("dispatch.unsendable_record", error=type(exc).__name__)
            return True
        if self.held is not None:
            self.held, self.retrying = None, False
            self.hold_backoff = delivery.BACKOFF_FIRST
        if not self.redelivers:
            b.rule_seq, b.hash = b.rule_seq + 1, h
        if out:
            b.add(out, line)
            if not (self.redelivers and "record" in rec):  # numbered here, not by the hook
                b.numbered += 1
                b.redactions += len(out.get("redactions") or ())
        return True

    def _commit(self, b: Batch) -> None:
        """Make the batch the cursor: moved past, numbered, chained and pending, in one
        atomic write (lazily when it only moves past records the rule does not take)."""
        st = self.state
        if self.sealer is not None:  # the batch's leaves, and its signed checkpoint if due
            self.sealer.close_batch(b, st, self.clock.now())
        new_segment = b.segment != st["segment"]
        st["segment"], st["offset"] = b.segment, b.offset
        st["rule_seq"], st["hash"] = b.rule_seq, b.hash
        st["pending"] = b.records or None
        st[refinish.KEY] = refinish.fingerprint(self.rule) if b.records else None
        self.lines = b.lines or None
        self.collecting = False
        if b.records or b.drops or new_segment or self.clock.now() - self.saved_at > POSITION_EVERY:
            try:
                self._save()
            except BaseException:
                if self.sealer is not None:
                    self.sealer.rollback(st)  # the batch is collected again
                raise
        if self.sealer is not None:
            self.sealer.persist()
        if b.drops:
            self.tally.count("drops", b.drops)
        if b.numbered:
            self.tally.count("dispatched", b.numbered)
        if b.redactions:
            self.tally.count("redactions", b.redactions)
        self.tally.flush()  # with the commit, not on a timer: a kill must not lose them

    def _deliver_pending(self) -> None:
        """Deliver the pending batch until the rule is done with it (delivery.settle):
        accepted, lost (best_effort) or parked (permanent); otherwise back off and retry."""
        recs = self.state["pending"]
        if refinish.stale(self.state, self.rule):  # finished under an older rule
            sealed = list(recs)  # their leaves are the tree's last ones
            if not refinish.again(self.rule, self.state, self.session.id, self.tally):
                self.retrying = True  # a refused key, a full disk: the batch waits as it is
                self.clock.sleep(self.stop, delivery.BACKOFF_CAP)
                return
            if self.sealer is not None:
                self.sealer.reseal(self.state, sealed, self.clock.now())  # a new checkpoint
            self.lines, recs = None, self.state["pending"]
            self._save()
            if self.sealer is not None:
                self.sealer.persist()
            if not recs:
                return
        if self.lines is None or len(self.lines) != len(recs):
            self.lines = [dumps(r) for r in recs]  # a batch left pending by a killed dispatcher
        tap.offer(self.rule.label, self.lines, self.session.layout.root)
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
        self.state["pending"] = None
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
            not st.get("pending")
            and not self.collecting
            and not self.ahead.buffer
            and (st["segment"], st["offset"]) >= (seg, size)
        )

    @property
    def idle(self) -> bool:
        closing = self.sealer is not None and self.sealer.closing  # crew.close_trees
        return self.retrying or (self.done() and not closing)

    @property
    def owes(self) -> bool:
        """Records this rule still has to deliver (at_least_once only keeps a debt)."""
        if self.rule.spec.delivery != "at_least_once":
            return False
        return not self.done()


def _sealer(session: Session, rule: LoadedRule, tally: counters.Tally) -> Any:
    """A chained rule's tree signer (evidence/sealer.py); none for the hook's (blocking)."""
    if not rule.spec.chain or rule.spec.mode == "blocking":
        return None
    from .evidence.sealer import for_rule  # cryptography: only a chaining rule pays for it

    return for_rule(session, rule, tally)
