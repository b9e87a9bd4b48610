"""The detached per-session dispatcher: `ways sensors dispatch --session ID`.

One process per session, holding `dispatch.lock` (a second one exits at once). The main
thread builds (build.py): it reads new spool frames, turns them into records (agents/,
records.py), numbers them `seq` and appends them to the session's journal (journal.py),
then commits the build cursor (session.py says how that survives a SIGKILL). Each enabled async rule
has its own worker with its own cursor into the journal (worker.py; every cursor is a
line in the session's one cursor log, cursorlog.py), in a thread of its own while it
has work (ondemand.py), so one stuck consumer never delays another. Rules are re-read
from the index whenever its key changes (crew.py), so an edited sensor file takes
effect without a restart.

Idle, it sleeps: an idle worker holds no thread (a commit pokes each one), and once
nothing is owed the build loop waits on a watch of the spool folder, a frame waking it
(spoolwatch.py), MAX_POLL at most; without a watch it polls every FAST_POLL, backing off
to MAX_POLL once no frame came for ACTIVE seconds. A frame torn by a killed hook is
sealed, skipped, counted and logged (spoolread.py).

Lifetime: exits after IDLE seconds with no new spool frames and every worker caught up
(or only retrying), or once drained after `session_end`. A session that ended with
nothing pending leaves its ledger and loses its folder; one with records still owed
leaves a pending marker (with the rules owed), so its next hook event restarts it, and
the resumer (resume.py) at any session's start. The exit and the hook's hand-off agree
under `spool.lock`: with the workers stopped, the dispatcher takes it, re-checks that
the spool is drained (else it serves again), leaves the marker or removes the folder,
and releases `dispatch.lock` while still holding it. A hook appends under the same lock
and only then probes `dispatch.lock`, so every frame is seen by a live dispatcher or
finds the lock free and starts one. Never writes to a terminal: the hook starts it with
fds 0-2 on /dev/null.
"""

from __future__ import annotations

import fcntl
import gc
import os
import time
from typing import Any

from ..state import events
from ..state.layout import Layout
from ..state.secure import UnsafeState, ensure_private_dir, open_private
from ..state.session import Session, write_json
from . import lost, metrics
from .build import Building
from .crew import Crew
from .journal import Journal
from .retention import sweep
from .spoolread import Reader

IDLE = 60.0
FAST_POLL, MAX_POLL = 0.005, 0.25  # the build loop's poll: while work is owed, when idle
# the cyclic collector's thresholds while serving. A drain makes and drops a few dicts
# per record field (records, masked copies, spans), almost none in a cycle; Python's
# default (700 allocations) runs a young collection every few records (bench/RESULTS.md,
# Traces). Cycles are still collected, less often.
GC_THRESHOLDS = (20_000, 20, 20)
ACTIVE = 2.0  # seconds after the last frame that the loop keeps polling fast
# the retention sweep (retention.py) runs once per dispatcher, at the first quiet moment
# (nothing to build, every worker idle), SWEEP_AFTER seconds after the start or before it
# leaves, whichever comes first; never while a backlog drains, whose delivery it would
# delay (bench/RESULTS.md, 2026-12-03 16:17). Nothing waits on it:
# a session is abandoned after an hour at least (ages.MIN_AGE).
SWEEP_AFTER = 30.0


class Dispatcher(Building):
    """One session's dispatcher: its lifecycle and the rule sync (the build loop is
    build.py's `Building`); the journal is journal.py's, each rule's delivery its
    worker's (worker.py), and neither sees the dispatcher: a worker is handed the
    journal, the session and its rule."""

    def __init__(self, session_id: str, idle: float = IDLE, layout: Layout | None = None):
        self.session = Session(session_id, layout)
        self.journal = Journal(self.session.journal, session_id, self._commit_build)
        self.idle = idle
        self.crew = Crew(self.journal, self.session)  # a worker per rule (crew.py)
        self.journal.on_grow = self.crew.poke  # a worker holds a thread only while it works
        self.spool = Reader(session_id, self.session.layout)
        self.ledger: dict[str, Any] = {}
        self._lock_fd: int | None = None
        self.started = time.monotonic()
        self.swept = False  # the retention sweep: once, at the first quiet moment

    # --- start and recovery ----------------------------------------------------------

    def acquire(self) -> bool:
        """Take the session's lock; False when another dispatcher has it, or when the
        session folder is gone (a late start after the previous dispatcher finished)."""
        try:
            ensure_private_dir(self.session.dir, self.session.layout.root, create=False)
            fd = open_private(self.session.lock, os.O_RDWR | os.O_CREAT)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        if not os.path.exists(self.session.lock):  # removed while we waited for it
            os.close(fd)
            return False
        self.session.create()
        write_json(self.session.info, {"pid": os.getpid(), "started": time.time()})
        return True

    # --- the main loop ---------------------------------------------------------------------

    def run(self) -> int:
        if not self.acquire():
            return 0  # another dispatcher holds this session
        try:
            self.recover()
            self.crew.sync(self.project)
            gc.set_threshold(*GC_THRESHOLDS)
            gc.enable()  # off while the command loaded (commands/dispatch.py)
            events.log("dispatch.start", session=self.session.id, rules=len(self.crew.workers))
            while True:
                reason = self.serve()
                self._sweep_once()  # before leaving, if no quiet moment came first
                if self.finish(reason):
                    break  # else a hook appended as we were leaving: serve it
        except Exception as exc:
            events.log("dispatch.error", session=self.session.id, error=type(exc).__name__)
            try:
                self.finish("error")
            except Exception:
                pass  # the lock goes with the process; the next hook starts a dispatcher
            if isinstance(exc, UnsafeState):
                raise  # a state path refused (secure.py): the command says so in one line
        finally:
            self.spool.close()
            self.crew.retire_keys()  # the key that signed this run's checkpoints goes
            metrics.tick(force=True)
        return 0

    def serve(self) -> str:
        """Build and deliver until an exit looks due; returns its reason."""
        self.crew.sync(self.project)  # workers again, after a `finish` that found more to do
        last_frame = last_sync = time.monotonic()
        ended_at = None
        poll = FAST_POLL
        while True:
            now = time.monotonic()
            built = self.build_step()
            if built:
                last_frame = now
            if not self.swept and self._sweep_due(built, now):
                self._sweep_once()
            if now - last_sync >= 1.0:
                last_sync = now
                self.crew.sync(self.project)
                self.crew.clean()
                self.crew.stir()  # counts flushed; a worker with work or a checkpoint due
            metrics.tick()  # the Prometheus textfile, when configured and due
            workers = list(self.crew.workers.values())
            if self.journal.ended:
                ended_at = ended_at or now
                done = self._spool_drained() and all(w.done() for w in workers)
                late = now - ended_at > 2 * self.idle  # an end that cannot be written
                if done and (not self.crew.close_trees() or late):  # each tree's end first
                    return "session_end"
                # a worker backing off, not one that became done since `done` was read; and
                # whatever holds it (a tree's end that cannot be written: a refused state
                # path), never past twice the idle time: a dispatcher always leaves
                stuck = any(w.backing_off for w in workers) or late
                if stuck and now - ended_at > self.idle and all(w.idle for w in workers):
                    return "retrying_after_end"
            else:
                ended_at = None
            idle = not ended_at and now - last_frame > self.idle and all(w.idle for w in workers)
            # not once the journal ended (exits above); _end_if_lost: a dead client's end to
            # drain; close_trees: each tree's end first
            if idle and not self._end_if_lost() and not self.crew.close_trees():
                return "idle"
            poll = FAST_POLL if now - last_frame < ACTIVE else min(poll * 2, MAX_POLL)
            quiet = not built and not self.journal.ended and self.crew.caught_up()
            self.spool.wait(poll, MAX_POLL if quiet else 0.0)  # a frame wakes it: spoolwatch.py

    def _sweep_once(self) -> None:
        """The retention sweep, once per dispatcher, off a drain's path (SWEEP_AFTER)."""
        if not self.swept:
            self.swept = True
            sweep(self.session.layout, skip=self.session.id)  # bounded, never raises

    def _sweep_due(self, built: int, now: float) -> bool:
        """Nothing was built this step and every worker is caught up or waiting to retry,
        or SWEEP_AFTER has passed."""
        if now - self.started > SWEEP_AFTER:
            return True
        return not built and all(w.idle for w in self.crew.everyone())

    def _end_if_lost(self) -> bool:
        s = self.session
        return lost.end_if_lost(self.journal, s.spool, self.idle, self.builders.get, self.tally)

    def _spool_drained(self) -> bool:
        return self.spool.drained(*self.build.spool)

    def finish(self, reason: str) -> bool:
        """Stop the workers and leave, unless the spool holds more (then False: serve
        again). Decided under spool.lock, and dispatch.lock released under it (the
        module docstring says why)."""
        everyone = self.crew.everyone()
        for w in everyone:
            w.stop.set()
        self.journal.wake()
        for w in everyone:
            w.join()  # each flushes its counts as it exits
        self.crew.retiring.clear()
        owes = sorted(w.rid for w in self.crew.workers.values() if w.owes)
        s = self.session
        lock = open_private(s.layout.spool_lock(s.id), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            drained = hasattr(self, "build") and self._spool_drained()
            if reason != "error" and not drained:
                self.crew.workers.clear()
                self.crew.key = ""
                return False
            if reason == "session_end" and not owes and self.journal.ended:
                self.ledger["traceparent"] = self.journal.traceparent
                self.ledger["cost"] = self.tally.state()  # a resumed run goes on from it
                from ..evidence.carry import ledger_trees  # each chained rule's tree

                trees = ledger_trees(s.layout, s.id)  # for a resume
                s.leave(self.journal.seq, self.ledger, trees)  # the ledger; the folder goes
                s.mark_pending(False)
            else:
                s.mark_pending(bool(owes) or not drained, owes)
            events.log("dispatch.exit", session=s.id, reason=reason, owes=bool(owes))
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # a hook appending after this starts a dispatcher
                self._lock_fd = None
            return True
        finally:
            os.close(lock)
