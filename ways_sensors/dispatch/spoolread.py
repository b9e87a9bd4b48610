"""The dispatcher's reading of a session's spool (its format: spool.py).

`Reader.read` gives the complete frames after the build cursor. A segment that has a
successor is finished (writers never go back to one, spool.py): once its frames are
read, what is left of it is a torn frame, skipped, counted and logged content-free,
and the reader moves on. An incomplete tail of the newest segment is a writer in its
write, or one killed in it: unchanged for TORN_GRACE seconds, it is sealed if it still
has no live writer (spool.seal_torn_tail), and skipped at the next read.

Skipped frames are counted in `<state>/spool-faults.json` (layout.py), {"torn": n,
"corrupt": n}, rewritten in place under an flock by dispatchers; `ways status` shows
the totals.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from .. import records
from ..state import events, secure, spool
from ..state.files import update_json_locked
from ..state.layout import Layout, read_state
from .spoolwatch import SpoolWatch

TORN_GRACE = 0.5  # seconds an incomplete tail may stay unchanged before it is sealed
FAULT_KINDS = ("torn", "corrupt")
SEGMENT = re.compile(r"[0-9]{10}\.seg")


def count_fault(kind: str, layout: Layout) -> None:
    """One more `kind` ("torn": a killed writer's frame, "corrupt": an unreadable one)."""

    def change(totals: dict[str, Any]) -> bool:
        totals[kind] = int(totals.get(kind, 0)) + 1
        return True

    try:
        update_json_locked(layout.spool_faults(), change)
    except (OSError, ValueError, TypeError):
        pass  # the events log line still says it


def read_faults(layout: Layout | None = None) -> dict[str, int]:
    """{kind: total} of the spool frames dispatchers skipped."""
    doc = read_state((layout or Layout()).spool_faults())
    doc = doc if isinstance(doc, dict) else {}
    return {k: v if isinstance(v := doc.get(k, 0), int) else 0 for k in FAULT_KINDS}


class Reader:
    """One session's spool, as its dispatcher reads it."""

    def __init__(self, session_id: str, layout: Layout) -> None:
        self.session_id = session_id
        self.layout = layout
        self.folder = layout.spool_dir(session_id)
        self._tail: tuple[str, int, float] | None = None  # an incomplete tail seen
        self._bell: SpoolWatch | None = None  # made at the first quiet wait
        self._bell_refused = False

    def read(self, seg: str, off: int) -> tuple[list[tuple[int, int, bytes | None]], str | None]:
        """(complete frames after (seg, off), as spool.scan_frames gives them; the next
        segment when there are none and `seg` is finished: move the cursor there)."""
        frames, data = self._frames(seg, off)
        if frames:  # the common case: no listing of the folder (a drain reads many times)
            return frames, None
        names = spool.segment_names(self.folder)  # before the read: see `later` below
        frames, data = self._frames(seg, off)
        if frames:
            return frames, None
        later = [n for n in names if n > seg]
        if later:  # finished before we read it: nothing more will come
            if data:
                self.skipped("torn", len(data))
            return [], later[0]
        if data:
            self._watch(seg, off + len(data))
        return [], None

    def _frames(self, seg: str, off: int) -> tuple[list[tuple[int, int, bytes | None]], bytes]:
        try:
            data = self._bytes(seg, off)
        except FileNotFoundError:
            data = b""
        return list(spool.scan_frames(data)), data

    def _bytes(self, seg: str, off: int) -> bytes:
        """The segment's bytes from `off` on (OSError when it cannot be read)."""
        fd = secure.open_private(os.path.join(self.folder, seg), os.O_RDONLY)
        with open(fd, "rb") as f:
            f.seek(off)
            return f.read()

    def _watch(self, seg: str, size: int) -> None:
        now = time.monotonic()
        if self._tail is None or self._tail[:2] != (seg, size):
            self._tail = (seg, size, now)
        elif now - self._tail[2] >= TORN_GRACE:
            self._tail = None
            spool.seal_torn_tail(self.session_id, seg, size, self.layout)

    def wait(self, poll: float, quiet: float = 0.0) -> None:
        """Sleep `poll` seconds; with `quiet` (nothing is owed until a frame comes), until
        a writer changes the spool folder instead, `quiet` seconds at most
        (spoolwatch.py). Where there can be no watch it sleeps `poll`, as it always did."""
        if quiet > 0 and self._bell is None and not self._bell_refused:
            self._bell = SpoolWatch.open(self.folder, self.session_id)
            self._bell_refused = self._bell is None and os.path.isdir(self.folder)
        if quiet > 0 and self._bell is not None:
            self._bell.wait(quiet)
        else:
            time.sleep(poll)

    def close(self) -> None:
        if self._bell is not None:
            self._bell.close()
            self._bell = None

    def drained(self, seg: str, off: int) -> bool:
        """Nothing after (seg, off): no later segment, no byte past `off`."""
        if any(n > seg for n in spool.segment_names(self.folder)):
            return False
        try:
            return os.path.getsize(os.path.join(self.folder, seg)) <= off
        except FileNotFoundError:
            return True

    def held(self, seg: str, off: int) -> tuple[str, dict[str, Any], int] | None:
        """(event, payload, ts_ns) of the frame starting at (seg, off), read again for
        a builder that held it back (agents.protocols.HoldsFrames); None when it is
        not there."""
        if not SEGMENT.fullmatch(seg) or off < 0:
            return None  # the name comes from a state file: never a path of its own
        try:
            data = self._bytes(seg, off)
        except OSError:
            return None
        for start, _, body in spool.scan_frames(data):
            entry = spool.parse_entry(body, seg, off) if start == 0 else None
            payload = records.parse_payload(entry.payload) if entry else None
            return (entry.event, payload, entry.ts_ns) if entry and payload else None
        return None

    def drop_spent(self, current: str, held: set[str]) -> None:
        """Remove the segments before `current` (the build cursor's), but those `held`
        (a builder still holds a parked result's frame in them)."""
        for name in spool.segment_names(self.folder):
            if name < current and name not in held:
                try:
                    os.unlink(os.path.join(self.folder, name))
                except FileNotFoundError:
                    pass

    def skipped(self, kind: str, size: int) -> None:
        """A frame that cannot be built: counted and logged content-free."""
        events.log(f"dispatch.{kind}_spool_frame", session=self.session_id, bytes=size)
        count_fault(kind, self.layout)
