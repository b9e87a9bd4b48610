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
"""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec

from . import secure
from .spool import scan_frames

MAGIC = b"WJ1 "
SEGMENT_BYTES = 4 << 20
FIRST_SEGMENT = "0000000001.seg"


_decoder = msgspec.json.Decoder()


def decode(body: bytes | None) -> Any:
    """A frame's record; None when it does not parse. msgspec reads it three times as
    fast as json.loads; json.loads takes what msgspec refuses: a lone surrogate passed
    through (json reads bytes with surrogatepass, as the dispatcher wrote them), NaN."""
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


def segments(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".seg"))
    except OSError:
        return []


def next_segment(name: str) -> str:
    return "%010d.seg" % (int(name[:10]) + 1)


class Journal:
    """One session's journal folder; positions are (segment name, byte offset)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

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
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
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
