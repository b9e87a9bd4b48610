"""One rule's worker: a thread that delivers the rule's records from the journal, in order.

Each enabled async rule (and each blocking at_least_once rule, for the hook's failed
dispatches) has its own worker, so one stuck consumer never delays another. The worker
keeps its cursor file (layout.py `cursor`; what survives a SIGKILL is in session.py):
its position in the journal, the rule's numbering (`rule_seq`) and chain head, and the
one finished record being delivered (`pending`). It matches, numbers, masks and chains
(pipeline.py) and makes each attempt through delivery.py under the rule's timeout; a
retryable failure backs off and tries again.

An idle worker sleeps on the dispatcher's condition until the journal grows (or it is
told to stop); it never polls. A reload never waits for a delivery: the old worker is
retired (`retire`), finishes its attempt in flight under the rule's own timeout, saves
its cursor and exits; its successor for the same rule (`after`) waits for that in its
own thread, then starts from the cursor the old one left, so one rule never has two
attempts in flight and a pending record is handed over on disk, as after a SIGKILL.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from . import chain, counters, delivery, events, index
from .layers import LoadedRule
from .layout import rule_key
from .pipeline import dumps, finish, match
from .session import read_json, write_json
from .targets import Outcome

if TYPE_CHECKING:
    from .dispatcher import Dispatcher


def load_rules(project: str) -> tuple[str, dict[str, tuple[str, LoadedRule]]]:
    """(index key, {rule id: (sensor, rule)}): the enabled async rules, and the blocking
    at_least_once ones, whose workers deliver the hook's failed dispatches again."""
    idx = index.current(project)
    rules = index.enabled_rules(idx, mode="async")
    for rid, (sensor, rule) in index.enabled_rules(idx, mode="blocking").items():
        if rule.rule.delivery == "at_least_once":
            rules[rid] = (sensor, rule)
    return idx.key, rules


class Worker(threading.Thread):
    """Delivers one rule's records from the journal, in order."""

    def __init__(
        self, disp: Dispatcher, sensor: str, rule: LoadedRule, after: Worker | None = None
    ):
        super().__init__(name=f"rule {sensor}/{rule.name}", daemon=True)
        self.disp = disp
        self.sensor = sensor
        self.rule = rule
        self.rid = rule_key(sensor, rule.name)
        self.tally = counters.Tally(self.rid, disp.session.layout)
        self.stop = threading.Event()
        self.path = disp.session.cursor_path(self.rid)
        self.after = after  # the rule's retired worker, maybe still in an attempt
        self.deactivate_on_exit = False
        # until `after` exits its cursor is its own: read it, never write it
        self.state: dict[str, Any] = after.state if after is not None else self._load_state()
        self.retrying = False
        self.buffer: list[tuple[int, Any]] = []
        self.redelivers = rule.rule.mode == "blocking"  # only the hook's failed dispatches

    # --- state ----------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        st = read_json(self.path)
        seg, size = self.disp.journal_end()
        if not isinstance(st, dict):
            s = self.disp.session
            head = s.layout.ledger_head(s.id, self.sensor, self.rule.name)
            rule_seq, h = head or (0, chain.GENESIS)
            st = {"rule_seq": rule_seq, "hash": h, "pending": None}
            st["segment"], st["offset"] = seg, size  # a new rule sees records from now on
        elif not st.get("active", True):
            st["segment"], st["offset"] = seg, size  # re-enabled: not what it missed
        st["active"] = True
        self._save(st)
        return st

    def _save(self, st: dict[str, Any] | None = None) -> None:
        write_json(self.path, st or self.state)

    def deactivate(self) -> None:
        self.state["active"] = False
        self._save()

    # --- the loop ---------------------------------------------------------------------

    def retire(self, deactivate: bool) -> None:
        """Stop without waiting for an attempt in flight (it ends under the rule's
        timeout); `deactivate`: the rule is gone, mark its cursor inactive on exit."""
        self.deactivate_on_exit = deactivate
        self.stop.set()

    def run(self) -> None:
        if self.after is not None:
            self.after.join()  # in this thread: the main thread never waits for a delivery
            self.state = self._load_state()  # where the old worker left it, pending included
            self.after = None
        try:
            self._loop()
        finally:
            if self.deactivate_on_exit:
                self.deactivate()
            self.tally.flush()

    def _loop(self) -> None:
        while not self.stop.is_set():
            seen = self.disp.generation  # before looking: a commit after it wakes us
            try:
                progressed = self.step()
            except Exception as exc:  # a bug must not kill the rule silently
                events.log(
                    "dispatch.worker_error",
                    sensor=self.sensor,
                    rule=self.rule.name,
                    session=self.disp.session.id,
                    error=type(exc).__name__,
                )
                progressed = False
                self.stop.wait(1.0)
            if not progressed:
                self.disp.wait_for_records(seen, self.stop)

    def _refill(self) -> bool:
        """Read the committed records after the cursor into the buffer; False if none."""
        while True:
            batch = self.disp.read_journal(self.state["segment"], self.state["offset"])
            if batch is None:  # the end of a finished segment: go on to the next
                nxt = self.disp.segment_after(self.state["segment"])
                if nxt is None:
                    return False
                self.state["segment"], self.state["offset"] = nxt, 0
                self._save()
                continue
            if not batch:
                return False
            r = self.rule.rule
            if r.delivery == "best_effort" and not self.redelivers:
                matching = [
                    i
                    for i, (_, rec) in enumerate(batch)
                    if rec is not None and match(self.rule, rec)
                ]
                drop = max(0, len(matching) - r.queue_cap)
                if drop:
                    for i in matching[:drop]:
                        batch[i] = (batch[i][0], "drop")
                    events.log(
                        "dispatch.drop",
                        sensor=self.sensor,
                        rule=self.rule.name,
                        session=self.disp.session.id,
                        count=drop,
                        cap=r.queue_cap,
                    )
            self.buffer = batch
            self.buffer.reverse()  # pop() from the end is the oldest
            return True

    def step(self) -> bool:
        if self.state.get("pending") is not None:
            self._deliver_pending()
            return True
        if not self.buffer and not self._refill():
            return False
        moved = False
        while self.buffer and not self.stop.is_set():
            end, rec = self.buffer.pop()
            self.state["offset"] = end
            moved = True
            if rec == "drop":
                self.state["rule_seq"] += 1  # the consumer sees the gap
                self.tally.count("drops")
                continue
            if self.redelivers:
                if not isinstance(rec, dict) or rec.get("retry_for") != self.rid:
                    continue
                self.state["pending"] = rec.get("record")  # numbered and chained already
                self._save()
                self._deliver_pending()
                return True
            try:
                if rec is None or not match(self.rule, rec):
                    continue
                out, h = finish(
                    rec,
                    self.sensor,
                    self.rule,
                    self.state["rule_seq"] + 1,
                    self.state["hash"],
                    deadline=time.monotonic() + self.rule.rule.timeout_s,
                )
                dumps(out)  # a record that cannot be sent must not block the ones behind it
            except Exception as exc:  # hostile shapes: nesting deeper than recursion allows
                self.tally.count("lost")
                events.log(
                    "dispatch.unsendable_record",
                    sensor=self.sensor,
                    rule=self.rule.name,
                    session=self.disp.session.id,
                    error=type(exc).__name__,
                )
                continue
            self.state["rule_seq"] += 1
            self.state["hash"] = h
            self.state["pending"] = out
            self._save()  # numbered, chained and moved past in one atomic write
            self.tally.count("dispatched")
            if out.get("redactions"):
                self.tally.count("redactions", len(out["redactions"]))
            self._deliver_pending()
            return True
        if moved:
            self._save()
        return True

    def _deliver_pending(self) -> None:
        """Deliver the pending record until the rule is done with it (delivery.settle):
        accepted, lost (best_effort) or parked (permanent); otherwise back off and retry."""
        rec = self.state["pending"]
        backoff = delivery.BACKOFF_FIRST
        while True:
            outcome = self.deliver(rec)
            if delivery.settle(
                self.sensor,
                self.rule,
                [rec],
                outcome,
                session=self.disp.session.id,
                tally=self.tally,
            ):
                break
            self.retrying = True
            if self.stop.wait(delivery.next_wait(backoff, outcome)):
                return  # leave it pending on disk for the next dispatcher
            backoff = min(backoff * 2, delivery.BACKOFF_CAP)
        self.retrying = False
        self.state["pending"] = None
        self._save()

    def deliver(self, rec: dict[str, Any]) -> Outcome:
        """One attempt, under the rule's timeout; counted and logged (delivery.py)."""
        return delivery.attempt(
            self.sensor, self.rule, [rec], session=self.disp.session.id, tally=self.tally
        )

    def done(self) -> bool:
        """Nothing left to deliver: at the committed journal end, nothing pending."""
        if self.after is not None:
            return False  # waiting for the retired worker's attempt
        seg, size = self.disp.journal_end()
        st = self.state
        return (
            st.get("pending") is None
            and not self.buffer
            and (st["segment"], st["offset"]) >= (seg, size)
        )

    @property
    def idle(self) -> bool:
        return self.retrying or self.done()

    @property
    def owes(self) -> bool:
        """Records this rule still has to deliver (at_least_once only keeps a debt)."""
        if self.rule.rule.delivery != "at_least_once":
            return False
        return not self.done()
