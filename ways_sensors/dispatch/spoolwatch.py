"""The dispatcher's wait for its spool to grow: an inotify watch on the spool folder.

Without it the build loop (dispatcher.py) would poll the spool every FAST_POLL for
ACTIVE after each frame: hundreds of reads of a folder that has not changed, as much
CPU as the dispatcher's whole start (bench/RESULTS.md, Spool watch), and a session
whose events come less than ACTIVE apart would keep it polling the whole time. With a
watch, a loop with nothing to build and every worker caught up sleeps in select()
until a writer changes the folder (a hook's append: IN_MODIFY; a new segment:
IN_CREATE or IN_MOVED_TO) or MAX_POLL passes, so a frame is still read as soon as it
lands, and nothing is added to the state root or to the hook's path.

The watch only ends waits early. Every wake, by an event or by the timeout, reads the
spool as a poll does, so a missed or spurious event costs latency, never a frame, and
where there is no watch the loop polls instead: another OS, no libc symbol, the
per-user limit of inotify instances reached (fs.inotify.max_user_instances), or a
spool folder that is not a plain folder (IN_DONT_FOLLOW, IN_ONLYDIR). A refused watch
is logged once, content-free (`dispatch.spool_watch_refused`, with the errno's name).
"""

from __future__ import annotations

import errno
import os
import select
import time
from typing import Any

from ..state import events

# <sys/inotify.h>
IN_MODIFY, IN_MOVED_TO, IN_CREATE = 0x2, 0x80, 0x100
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
MASK = IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW
DRAIN = 64 * 1024  # bytes of queued events read per call; all of them are read


_found: list[tuple[Any, Any] | None] = []  # _libc's answer, looked up once


def _libc() -> tuple[Any, Any] | None:
    """libc's inotify_init1 and inotify_add_watch, or None where they are missing; looked
    up once (a spool folder not made yet is tried again at each quiet wait)."""
    if not _found:
        _found.append(_lookup())
    return _found[0]


def _lookup() -> tuple[Any, Any] | None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (ImportError, OSError, AttributeError):
        return None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    add.restype = ctypes.c_int
    return init, add


class SpoolWatch:
    """An inotify descriptor watching one spool folder (close-on-exec, non-blocking)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls, folder: str, session_id: str = "") -> SpoolWatch | None:
        """A watch on `folder`, or None (logged) where there can be none: then poll."""
        funcs = _libc()
        if funcs is None:
            return None
        init, add = funcs
        import ctypes

        fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            _refused(ctypes.get_errno(), session_id)
            return None
        if add(fd, os.fsencode(folder), MASK) < 0:
            err = ctypes.get_errno()
            os.close(fd)
            if err != errno.ENOENT:  # no spool yet: the caller tries again later
                _refused(err, session_id)
            return None
        return cls(fd)

    def wait(self, timeout: float) -> bool:
        """Until the folder changes or `timeout` seconds pass; True when it changed. Every
        queued event is read, so a burst of appends wakes the loop once."""
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout)
        except (OSError, ValueError):  # closed: a wait that never ends early, never a spin
            time.sleep(timeout)
            return False
        if not ready:
            return False
        try:
            while os.read(self.fd, DRAIN):
                pass
        except OSError:  # EAGAIN: drained
            pass
        return True

    def close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


def _refused(err: int, session_id: str) -> None:
    events.log(
        "dispatch.spool_watch_refused",
        session=session_id,
        error=errno.errorcode.get(err, str(err)),
    )
