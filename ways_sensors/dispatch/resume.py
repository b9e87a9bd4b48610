"""The resumer: sessions whose dispatcher exited owing records, retried a few at a time.

`ways sensors dispatch --resume-owed`, started detached by the hook at a session start
(launch.ensure_resumer) when pending markers exist, no resumer runs and one may be due.
It is the only process that resumes other sessions, so a start never brings a herd of
dispatchers, and the hook never waits for them.

Files (layout.py; folder 0700, files 0600):

    resume/resume.lock    flock'd by the one resumer for its run; a second exits at once
    resume/backoff.json   {key: {"due": epoch seconds, "tries": n}}: when a consumer is
                          tried next. key: a rule key (one rule, one consumer), or
                          "@<session id>" for a marker that names no rule
    resume/next           the earliest `due` among the sessions left owed (ASCII epoch
                          seconds), written as the run ends; the hook reads it

One run: an owed session (its pending marker, session.py) is due when no dispatcher holds
it and one of the rules it owes is due. At most SLOTS of them run at once, each a child
`ways sensors dispatch --idle RESUME_IDLE -- ID`, oldest marker first, each once. As one
exits: rules it no longer owes lose their backoff; rules it still owes back off
(BACKOFF_FIRST doubling up to BACKOFF_CAP), and sessions owing only backed-off rules
wait for them. A child that left its marker untouched never ran (its session's own
dispatcher held the lock) and changes nothing. The run ends when no session is due.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from typing import Any

from ..state import secure
from ..state.files import replace_atomically
from ..state.layout import Layout, read_state
from ..state.session import read_pending
from . import launch

SLOTS = 2  # resumed dispatchers at once, whatever the number of owed sessions
RESUME_IDLE = 2.0  # a resumed dispatcher's idle exit: it comes to deliver, not to wait
BACKOFF_FIRST, BACKOFF_CAP = 30.0, 1800.0


def _marker_stamp(layout: Layout, sid: str) -> int | None:
    try:
        return os.stat(layout.pending_marker(sid)).st_mtime_ns
    except OSError:
        return None


def _keys(sid: str, marker: dict[str, Any]) -> list[str]:
    rules = marker.get("rules")
    return [str(r) for r in rules] if isinstance(rules, list) and rules else ["@" + sid]


def _held(layout: Layout, sid: str) -> bool:
    """A dispatcher holds the session's lock (a missing folder: none can)."""
    try:
        fd = os.open(layout.dispatch_lock(sid), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


class Run:
    """One resumer run under resume.lock."""

    def __init__(self, layout: Layout, slots: int, idle: float) -> None:
        self.layout = layout
        self.slots = slots
        self.idle = idle
        doc = read_state(layout.resume_backoff())
        self.backoff: dict[str, dict[str, float]] = {
            k: v for k, v in (doc if isinstance(doc, dict) else {}).items() if isinstance(v, dict)
        }
        self.tried: set[str] = set()
        self.failed: set[str] = set()  # keys backed off in this run
        self.running: dict[str, tuple[subprocess.Popen[bytes], list[str], int | None]] = {}

    def due_at(self, sid: str, marker: dict[str, Any]) -> float:
        return min(float(self.backoff.get(k, {}).get("due", 0)) for k in _keys(sid, marker))

    def owed(self) -> list[tuple[float, str, dict[str, Any]]]:
        """(since, sid, marker) of each owed session with a session folder; a marker
        whose folder is gone is stale (a folder goes only with nothing owed): removed."""
        out = []
        for sid in self.layout.pending_sessions():
            marker = read_pending(self.layout, sid)
            if not marker:
                continue
            if not os.path.isdir(self.layout.session_dir(sid)):
                try:
                    os.unlink(self.layout.pending_marker(sid))
                except OSError:
                    pass
                continue
            out.append((marker.get("since") or 0.0, sid, marker))
        return sorted(out, key=lambda t: (t[0], t[1]))

    def start_due(self) -> None:
        now = time.time()
        for _, sid, marker in self.owed():
            if len(self.running) >= self.slots:
                return
            if sid in self.tried or sid in self.running or self.due_at(sid, marker) > now:
                continue
            self.tried.add(sid)
            if _held(self.layout, sid):
                continue  # its own dispatcher is on it
            argv = launch.dispatcher_argv(sid)
            argv[-2:-2] = ["--idle", "%g" % self.idle]
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.running[sid] = (proc, _keys(sid, marker), _marker_stamp(self.layout, sid))

    def reap(self) -> bool:
        """Settle the children that exited; True when one did."""
        done = [sid for sid, (proc, _, _) in self.running.items() if proc.poll() is not None]
        now = time.time()
        for sid in done:
            _, keys, stamp = self.running.pop(sid)
            after = _marker_stamp(self.layout, sid)
            if after is not None and after == stamp:
                continue  # it never ran: the session's own dispatcher held the lock
            marker = read_pending(self.layout, sid)
            still = set(_keys(sid, marker)) if marker else set()
            for k in keys:
                if k not in still:
                    self.backoff.pop(k, None)
            for k in still - self.failed:  # one more try per run, whatever ran at once
                self.failed.add(k)
                tries = int(self.backoff.get(k, {}).get("tries", 0)) + 1
                wait = min(BACKOFF_FIRST * 2 ** (tries - 1), BACKOFF_CAP)
                self.backoff[k] = {"due": now + wait, "tries": tries}
        if done:
            self.save()
        return bool(done)

    def save(self) -> None:
        import json

        replace_atomically(self.layout.resume_backoff(), json.dumps(self.backoff))

    def finish(self) -> None:
        """Write resume/next; drop the backoff of sessions no longer owed."""
        owed = self.owed()
        sids = {sid for _, sid, _ in owed}
        for k in [k for k in self.backoff if k.startswith("@") and k[1:] not in sids]:
            del self.backoff[k]
        self.save()
        nxt = min((self.due_at(sid, m) for _, sid, m in owed), default=None)
        if nxt is not None:
            replace_atomically(self.layout.resume_next(), "%.3f\n" % nxt)
        else:
            try:
                os.unlink(self.layout.resume_next())
            except FileNotFoundError:
                pass

    def run(self) -> None:
        while True:
            self.start_due()
            if not self.running:
                break
            if not self.reap():
                time.sleep(0.05)
        self.finish()


def run_owed(layout: Layout | None = None, slots: int = SLOTS, idle: float = RESUME_IDLE) -> int:
    """One resumer run, unless another holds resume.lock."""
    layout = layout or Layout()
    secure.ensure_private_dir(layout.resume_dir(), layout.root)
    fd = secure.open_private(layout.resume_lock(), os.O_RDWR | os.O_CREAT, layout.root)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        Run(layout, slots, idle).run()
        return 0
    finally:
        os.close(fd)
