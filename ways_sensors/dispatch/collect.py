"""Collecting a rule's batch from the journal: what a worker takes into one attempt, and
what it does with a record it cannot finish.

A batch holds up to the rule's `max_records` (timing.batch_for) and BATCH_BYTES, taking
the records already in the journal at once; one that is not full waits for more only
while the rule is busy (its previous batch ended less than `max_delay` ago) and each
record comes within LINGER_GAP of the one before, never past `max_delay` after its
first. A quiet rule sends its next record at once: no latency for an idle session.

Each record taken is matched, numbered, masked and chained (pipeline/stages.py). An
at_least_once record that cannot be finished now is held at the head (unfinished.py
says what follows): the batch ends before it, and the next step tries it again after a
backoff or parks it withheld, numbered and chained in order.

`Collecting` is the worker's half that reads; worker.py's `Worker` commits, delivers and
owns the thread. The state named below is the worker's (set in its `__init__`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..config.rules import LoadedRule
from ..pipeline import delivery, unfinished
from ..pipeline.stages import dumps, finish, match
from ..state import counters
from ..state.cursorstate import Cursor
from ..state.session import Session
from . import blocking
from .cursor import Batch
from .journal import Clock, Journal
from .readahead import ReadAhead

BATCH_BYTES = 4 << 20  # a batch stops growing here (a larger record still goes alone)
LINGER_GAP = 0.01  # a lingering batch closes when no record came for this long


class Collecting:
    """Takes records from the journal into a batch; mixed into worker.Worker."""

    journal: Journal
    session: Session
    rule: LoadedRule
    rid: str
    clock: Clock
    stop: threading.Event
    tally: counters.Tally
    state: Cursor
    ahead: ReadAhead
    max_records: int
    max_delay: float
    budget0: float
    redelivers: bool
    retrying: bool
    collecting: bool
    last_sent: float
    held: tuple[str, int] | None  # (cause, tries) of the record held back
    hold_backoff: float
    _log: Callable[..., None]
    _rewind: Callable[[], None]
    _commit: Callable[[Batch], None]

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
            if self.rule.at_least_once:
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
