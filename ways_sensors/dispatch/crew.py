"""A dispatcher's crew: a worker per rule (worker.py), following the rule index.

`sync` follows the index whenever its key changes: a removed or changed rule's worker is
retired, never waited for (worker.py); a new or changed rule gets a worker, after the
retired one. `poke`, after each journal commit, lets each worker start a thread if it
has work (ondemand.py): an idle rule holds none. `clean` drops the journal segments
every worker has passed.
"""

from __future__ import annotations

import sys

from .. import index
from ..config import indexbuild, rules
from ..state.session import Session
from .journal import Journal
from .worker import Worker


def rules_for_workers(project: str) -> tuple[str, dict[str, rules.LoadedRule]]:
    """(index key, {rule key: rule}) of the rules a dispatcher runs a worker for: the
    enabled async rules, and the blocking at_least_once ones, whose workers deliver the
    hook's failed dispatches again."""
    idx = indexbuild.current(project)
    wanted = rules.enabled(idx, mode="async")
    for key, rule in rules.enabled(idx, mode="blocking").items():
        if rule.at_least_once:
            wanted[key] = rule
    return idx.key, wanted


class Crew:
    """The workers of one session's dispatcher."""

    def __init__(self, journal: Journal, session: Session) -> None:
        self.journal = journal
        self.session = session
        self.workers: dict[str, Worker] = {}
        self.retiring: dict[str, Worker] = {}  # replaced workers finishing an attempt
        self.key = ""  # the index key the workers follow
        self._caught_up: tuple[object, ...] | None = None  # see caught_up
        self._closed: dict[str, int] = {}  # rule key -> tree size its end was asked at

    def sync(self, project: str) -> None:
        """Follow the index: a removed or changed rule's worker is retired, never waited
        for (worker.py); a new or changed rule gets a worker, after the retired one."""
        key = index.compute_key(project)
        if key == self.key:
            return
        self.key, wanted = rules_for_workers(project)
        for rid, worker in list(self.workers.items()):
            current = wanted.get(rid)
            if current is None or not current.same(worker.rule):
                worker.retire(deactivate=current is None)
                self.retiring[rid] = worker
                del self.workers[rid]
        self.journal.wake()
        for rid, rule in wanted.items():
            if rid not in self.workers:
                old = self.retiring.get(rid)
                if old is not None:
                    old.deactivate_on_exit = False  # wanted again: its cursor goes on
                after = old if old and old.is_alive() else None
                w = Worker(self.journal, self.session, rule, after=after)
                self.workers[rid] = w
                if not w.done():  # a backlog, or a handover: else the next commit pokes it
                    w.start()

    def poke(self) -> None:
        """After each journal commit: a worker with work starts a thread (ondemand.py)."""
        for w in self.everyone():
            w.poke()

    def caught_up(self) -> bool:
        """Every worker is done with what the journal holds. Once it holds, it is kept
        until the journal's end, the index key or the number of workers moves (a done
        worker has nothing pending, so nothing else starts it again): a dispatcher with
        nothing owed asks at every quiet wait, and asking thousands of workers each time
        shows in its idle CPU (bench/RESULTS.md, 2026-12-03 17:35)."""
        mark = (self.journal.end, self.key, len(self.workers))
        if mark == self._caught_up:
            return True
        done = all(w.done() for w in self.workers.values())
        self._caught_up = mark if done else None
        return done

    def stir(self) -> None:
        """The dispatcher's safety net, once a second: counts flushed, and a worker with
        work, or a checkpoint due (evidence/cadence.py), poked (ondemand.py); no key held
        in memory whose file another process destroyed (evidence/keys.py)."""
        for w in self.everyone():
            w.tally.flush()
            if not w.done() or (w.sealer is not None and w.sealer.due(w.clock.now())):
                w.poke()
        keyrings = sys.modules.get("ways_sensors.evidence.keyrings")
        if keyrings is not None:
            keyrings.forget_destroyed()  # a key another dispatcher's rollover destroyed

    def close_trees(self) -> bool:
        """Before the dispatcher leaves: each worker whose tree has leaves after its last
        end (evidence/sealer.py) is asked to close it, with a signed end delivered like
        any batch; once per tree size, so a close that fails is not asked for again.
        True while one is asked or closing: the dispatcher serves on until it is done."""
        busy = False
        for rid, w in self.workers.items():
            s = w.sealer
            if s is None or w.backing_off:
                continue  # a consumer that is down: the next dispatcher closes it
            if s.closing:
                busy = True
            elif s.open and self._closed.get(rid) != s.tree.size:
                self._closed[rid] = s.tree.size
                s.closing = busy = True
                w.poke()
        return busy

    def everyone(self) -> list[Worker]:
        """The current workers and the retired ones still finishing an attempt."""
        return list(self.workers.values()) + list(self.retiring.values())

    def clean(self) -> None:
        """Drop the journal segments every worker has passed."""
        self.retiring = {rid: w for rid, w in self.retiring.items() if w.is_alive()}
        everyone = self.everyone()
        keep = min((w.state.segment for w in everyone), default=self.journal.end[0])
        self.journal.drop_before(keep)

    def retire_keys(self) -> None:
        """At the dispatcher's exit: the machine log signed up to its end (its entries
        since its last checkpoint), then the evidence keys its workers signed with are
        destroyed (evidence/keyrings.py), so nothing left can sign as their epoch; nothing
        is imported when no chained rule ran."""
        machinelog = sys.modules.get("ways_sensors.evidence.machinelog")
        if machinelog is not None:  # its entries signed first (the log's key stays)
            machinelog.close_all()
        keyrings = sys.modules.get("ways_sensors.evidence.keyrings")
        if keyrings is not None:
            keyrings.retire_keys()
