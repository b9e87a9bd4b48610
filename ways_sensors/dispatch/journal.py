"""A session's journal: the built records, numbered `seq`, that every rule's worker reads.

Files, under `<state>/sessions/<session_id>/journal/` (folder 0700, files 0600):

    <n>.seg               n = 0000000001, 0000000002, ...; a new segment is started when
                          the newest one reaches SEGMENT_BYTES

A segment is a run of frames, the spool's framing with its own magic:

    WJ1 <record JSON length> \\n <record JSON, one line> \\n

Who writes: only the dispatcher's main thread appends, then commits the journal end
(segment, size) in the build cursor (`build.json`, session.py). Who reads: each rule's
worker, never past the committed end. Who deletes: the dispatcher, a segment every
rule's cursor has passed (`drop_before`).

What survives a SIGKILL: anything beyond the committed end was appended but not
committed; the next dispatcher cuts it away (`cut_back`) before building again, so every
record in the journal is built once and numbered once. A frame that does not parse is
read as None (the worker skips it); a record is read with msgspec, or json where it
cannot (`decode`).

The one encoder (`encode`): a record as its consumers receive it (pipeline.dumps:
compact JSON, non-ASCII kept, a value that is not JSON as its str(), a float that is
not finite as null, UTF-8 with utf8.ERRORS: a lone surrogate becomes U+FFFD), so a
journal holds valid UTF-8 only, and what a worker reads back (and chains) is what the
consumer gets. Everything that appends goes through `stage`: the build
loop, its retry entries and the lost-session check (lost.py).

The interface the rest of the dispatcher sees (`Journal`): the writer stages records and
`commit`s them (append, then the owner's durable commit, then readers are woken); a
reader asks for the committed `end`, `read`s from a position and `wait`s for growth.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from .. import records
from ..pipeline.stages import dumps
from ..state import secure
from ..state.spool import scan_frames

MAGIC = b"WJ1 "
SEGMENT_BYTES = 4 << 20
FIRST_SEGMENT = "0000000001.seg"

Position = tuple[str, int]  # (segment name, byte offset)


_decoder = msgspec.json.Decoder()


def decode(body: bytes | None) -> Any:
    """A frame's record; None when it does not parse. msgspec reads it three times as
    fast as json.loads; json.loads takes what msgspec refuses: NaN and Infinity (which
    an older version's `encode` wrote for such floats, as json does) and the lone
    surrogates an older version's lost-session check passed through (json reads bytes
    with surrogatepass)."""
    if body is None:
        return None
    try:
        return _decoder.decode(body)
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def frame(record_json: bytes) -> bytes:
    return MAGIC + str(len(record_json)).encode() + b"\n" + record_json + b"\n"


def encode(record: dict[str, Any]) -> bytes:
    """A record as one journal frame: the one encoder (the module docstring says how)."""
    return frame(dumps(record))


def segments(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".seg"))
    except OSError:
        return []


def next_segment(name: str) -> str:
    return "%010d.seg" % (int(name[:10]) + 1)


class Clock:
    """A worker's time (worker.py): `now` (monotonic seconds) and `sleep` (a backoff, cut
    short when `stop` is set; True if it was). A test hands in one of its own to check
    backoff and lingering in virtual time; `Journal.wait` is a worker's only other sleep."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(seconds)


class Journal:
    """One session's journal: its segment files, the committed end, the last `seq` given
    and whether a session end was built into it; readers sleep on it until it grows.

    Written only by the dispatcher's main thread (`stage`, `commit`), read by every rule's
    worker (`end`, `read`, `segment_after`, `wait`). `commit` calls the owner's `on_commit`
    (the dispatcher's build cursor, which records `end`, `seq` and `ended`) between the
    append and the wake-up, so no reader sees a record the owner has not committed."""

    def __init__(
        self, folder: str, session_id: str, on_commit: Callable[[], None] | None = None
    ) -> None:
        self.folder = folder
        self.session_id = session_id
        self.on_commit = on_commit
        self.on_grow: Callable[[], None] | None = None  # after a commit that appended
        self.end: Position = (FIRST_SEGMENT, 0)  # committed: readers never read past it
        self.seq = 0  # the last number given to a record (staged ones included)
        self.ended = False  # a session end is in the journal (the dispatcher may drain)
        self.generation = 0  # bumped at each commit that appended
        # the client's trace the session joined, stamped on what is staged (records.py);
        # kept in the build cursor by the owner, like `seq`
        self.traceparent: str | None = None
        self.identity: dict[str, Any] | None = None  # fleet/identity.py: on every record
        self._cond = threading.Condition()
        self._staged = bytearray()

    # --- the writer ----------------------------------------------------------------------

    def restore(self, end: Position, seq: int, ended: bool) -> None:
        """Recovery: the committed state of a build cursor; what lies beyond `end` was
        appended but not committed, and is cut away."""
        self.end, self.seq, self.ended = (end[0], end[1]), seq, ended
        self._staged.clear()
        self.cut_back(*self.end)

    def stage(self, record: dict[str, Any]) -> None:
        """Encode one record for the next commit (an unencodable one raises, staging
        nothing)."""
        self._staged += encode(record)

    def stage_drafts(self, drafts: Iterable[records.Draft], project: str) -> int:
        """Number the drafts after `seq`, envelope and encode them for the next commit;
        all or none (an unencodable one raises, staging and numbering nothing). Returns
        how many were staged."""
        seq, out = self.seq, []
        if self.identity is None:
            from ..fleet import identity

            self.identity = identity.current()
        for d in drafts:
            seq += 1
            rec = records.envelope(
                d, seq, self.session_id, project, self.traceparent, self.identity
            )
            if d.section == "session_start":  # each run's start: what install made it
                from ..fleet.inventory import inventory

                rec["inventory"] = inventory(project)
            out.append(encode(rec))
        self._staged += b"".join(out)
        n, self.seq = seq - self.seq, seq
        return n

    def commit(self) -> None:
        """Append what was staged, let the owner commit (`on_commit`), wake the readers."""
        data = bytes(self._staged)
        self._staged.clear()
        if data:
            self.end = self.append(*self.end, data)
        if self.on_commit is not None:
            self.on_commit()
        if data:
            with self._cond:
                self.generation += 1
                self._cond.notify_all()
            if self.on_grow is not None:
                self.on_grow()  # the dispatcher pokes its workers (ondemand.py)

    # --- the readers -----------------------------------------------------------------------

    def read_from(self, at: Position) -> list[tuple[int, Any]] | None:
        """Committed records after `at` (`read`, up to the committed end)."""
        return self.read(at[0], at[1], self.end)

    def next_segment(self, seg: str) -> str | None:
        """The segment after `seg`, if it is committed."""
        return self.segment_after(seg, self.end[0])

    def wait(self, seen: int, stop: threading.Event, timeout: float) -> None:
        """Sleep until the journal grows past generation `seen`, or `stop` is set (the
        setter calls `wake`), at most `timeout`."""
        with self._cond:
            if self.generation == seen and not stop.is_set():
                self._cond.wait(timeout)

    def wake(self) -> None:
        """Wake every reader (one was told to stop)."""
        with self._cond:
            self._cond.notify_all()

    # --- the segment files -----------------------------------------------------------------

    def segments(self) -> list[str]:
        return segments(self.folder)

    def segment_after(self, seg: str, committed: str) -> str | None:
        """The segment after `seg`, if it is not beyond the committed one."""
        later = [n for n in self.segments() if n > seg]
        return later[0] if later and later[0] <= committed else None

    def read(self, seg: str, offset: int, end: tuple[str, int]) -> list[tuple[int, Any]] | None:
        """Committed records after (seg, offset), up to the committed `end`:
        [(end offset, record | None)], [] when caught up, None at the end of a segment
        that has a successor."""
        end_seg, end_size = end
        if seg == end_seg:
            limit: int | None = end_size
        elif seg < end_seg:
            limit = None
        else:
            return []
        try:
            with open(secure.open_private(os.path.join(self.folder, seg), os.O_RDONLY), "rb") as f:
                f.seek(offset)
                data = f.read() if limit is None else f.read(max(0, limit - offset))
        except FileNotFoundError:
            data = b""
        out: list[tuple[int, Any]] = []
        for _, stop, body in scan_frames(data, MAGIC):
            out.append((offset + stop, decode(body)))
        if not out and seg != end_seg:
            return None
        return out

    def append(self, seg: str, size: int, data: bytes) -> tuple[str, int]:
        """Write `data` at the committed end (seg, size), starting a new segment when
        this one is full; returns the new end, which the caller commits."""
        if size >= SEGMENT_BYTES:
            seg, size = next_segment(seg), 0
        path = os.path.join(self.folder, seg)
        fd = secure.open_private(path, os.O_WRONLY | os.O_CREAT)
        try:
            os.lseek(fd, size, os.SEEK_SET)
            secure.write_all(fd, data)
        finally:
            os.close(fd)
        return seg, size + len(data)

    def cut_back(self, seg: str, size: int) -> None:
        """Recovery: remove what lies beyond the committed end (seg, size)."""
        for name in self.segments():
            path = os.path.join(self.folder, name)
            if name > seg:
                os.unlink(path)
            elif name == seg:
                fd = secure.open_private(path, os.O_WRONLY)  # never truncate through a link
                try:
                    if os.fstat(fd).st_size > size:
                        os.ftruncate(fd, size)
                finally:
                    os.close(fd)

    def drop_before(self, keep: str) -> None:
        """Delete the segments before `keep` (every reader has passed them)."""
        for name in self.segments():
            if name < keep:
                try:
                    os.unlink(os.path.join(self.folder, name))
                except FileNotFoundError:
                    pass
