"""A thread only while there is work: what runs each rule's worker (worker.py).

A thread per rule, each asleep on the journal, would make a session doing nothing hold a
thread and its memory for every rule (bench/RESULTS.md, A thread only while a rule has
work). So a worker is an `OnDemand`. The dispatcher `poke`s every worker after each
journal commit (and, as a safety net, once a second each one that is not done); a poke
starts a thread unless one runs. The thread runs `burst` until the worker finds nothing
to do, then ends, unless it was poked meanwhile (then it looks again: a poke is never
lost, it is remembered under the lock the thread ends under). An idle rule holds no
thread; a busy one (collecting, delivering, backing off, waiting on a hung consumer
under its timeout) holds exactly one, its own, so one rule's trouble still never delays
another.

Stopping (`halt`, and the dispatcher's `finish` through `stop` and `join`): a poke
after `stop` starts nothing; a running thread sees `stop`, ends its attempt under the
rule's timeout and calls `last` on its way out; with no thread running, whoever stops
the worker calls `last` itself. `last` runs once, and a second caller waits for the
first to finish it (a successor loads the cursor `last` saves).
"""

from __future__ import annotations

import threading


class OnDemand:
    """Runs `burst` in a thread of its own while there is work (the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._poked = False
        self._end_lock = threading.Lock()
        self._ended = False

    def burst(self) -> None:
        """Work until there is nothing to do, or `stop` is set."""
        raise NotImplementedError

    def last(self) -> None:
        """What is done once, as the worker stops for good."""

    def start(self) -> None:
        self.poke()

    def poke(self) -> None:
        """There may be work: start a thread unless one runs (or the worker stopped)."""
        with self._lock:
            self._poked = True
            if self._thread is not None or self.stop.is_set():
                return
            thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread = thread
        try:
            thread.start()
        except RuntimeError:  # no thread to be had now: the next poke tries again
            with self._lock:
                self._thread = None

    def _run(self) -> None:
        me = threading.current_thread()
        try:
            while not self.stop.is_set():
                with self._lock:
                    self._poked = False
                self.burst()
                with self._lock:
                    if not self._poked and not self.stop.is_set():
                        self._thread = None
                        return
        finally:
            if self.stop.is_set():
                self._end()
            with self._lock:
                if self._thread is me:
                    self._thread = None

    def halt(self) -> None:
        """Stop without waiting for an attempt in flight (it ends under its timeout)."""
        self.stop.set()
        if not self.is_alive():
            self._end()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the running thread, if any; once stopped, `last` has run on return."""
        with self._lock:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if self.stop.is_set() and not self.is_alive():
            self._end()

    def is_alive(self) -> bool:
        with self._lock:
            return self._thread is not None

    def _end(self) -> None:
        with self._end_lock:
            if not self._ended:
                self._ended = True
                self.last()
