"""Reading an agent's session file (Claude Code's transcript, Codex's rollout, Gemini CLI's
chat file): JSON objects, one a line, written while we read them, at a path a payload names.

Every reading of such a file goes through this module, so each is bounded the same way:

* only a regular file is read: it is opened O_NONBLOCK (a FIFO opens at once instead of
  waiting for a writer), then fstat'd; a FIFO, a device such as /dev/zero or a folder
  raises NotRegularFile (the functions that answer "nothing" return None or [] instead).
  A symlink is followed, since the payload could name the target itself; what it leads
  to must be regular too;
* a live read (`read_from`) reads from its offset in CHUNK pieces, at most about
  MAX_READ bytes a call (plus the rest of a line already begun) and for at most
  MAX_SECONDS (past that it stops at the last complete line, which the next call
  reads on from);
* a whole-file read (`iter_file`, `iter_lines`, a replay) stops after MAX_FILE bytes,
  and says so (`ReadStats.truncated`);
* a line longer than MAX_LINE is never held whole: it is skipped to its newline, across
  calls if need be, and counted (`ReadStats.too_long`). A reader handed an offset in
  the middle of a line (after such a skip, or a fast-forward that found no newline)
  skips to the next one;
* `first_line`, `read_at` and `next_line` read at most the bytes they are asked for.

The lines themselves (reference §4.11): a line that does not parse is skipped without
losing its neighbours; two objects on one line are split with `raw_decode`; NUL
padding is dropped; only complete lines (ending in a newline) are consumed, so a
half-written last line is read later, whole; order is file order, never timestamps.
A line is decoded by msgspec when the process has loaded it anyway (a dispatcher, a
command: never a blocking hook, which keeps to the standard library), else by json;
what msgspec refuses (NaN, a lone surrogate, 1e400) goes to json, which decides, so the
objects are json's either way (tests/test_sessionfile.py holds the two equal).

This module only turns bytes into objects; what they mean is each agent's own
(claude_code/tracker.py, codex/rollout.py, gemini/chats.py).
"""

from __future__ import annotations

import os
import stat
import sys
import time

from ... import jsoncore
from ...plain import Plain
from . import handed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_decoder = jsoncore.Decoder()
_fast: list[Any] = []  # msgspec's JSON decoder, once this process has msgspec loaded
CHUNK = 1 << 20  # bytes per read
MAX_LINE = 8 << 20  # a longer line is skipped, never held (the agents' are far shorter)
MAX_READ = 8 << 20  # bytes a live read takes per call, past which it stops at a line end
MAX_SECONDS = 2.0  # how long a live read may take per call (a slow network mount)
MAX_FILE = 1 << 30  # bytes a whole-file read (a replay) reads at most
HEAD_LINE = 1 << 20  # bytes `first_line` reads at most


class ReadStats(Plain):
    """What one process's reading of session files met (counts, for the logs only)."""

    FIELDS = ("lines", "objects", "malformed", "too_long", "truncated")
    __slots__ = FIELDS

    def __init__(self) -> None:
        self.lines = self.objects = self.malformed = 0
        self.too_long = 0  # lines over MAX_LINE, skipped
        self.truncated = False  # a whole-file read stopped at MAX_FILE


class NotRegularFile(OSError):
    """The path names something that is not a regular file."""


def open_regular(path: str) -> int | None:
    """A descriptor on the regular file at `path`; None when there is none yet. Raises
    NotRegularFile for anything else, OSError when it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile("not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lines(
    fd: int,
    offset: int,
    stats: ReadStats | None,
    budget: int | None,
    deadline: float | None = None,
) -> Iterator[tuple[bytes | None, int]]:
    """(line, the offset after it) for each complete line from `offset`; (None, offset)
    as a too-long line is skipped up to `offset`. Stops at the end of the file (an
    incomplete last line is left for later), once `budget` bytes are read and no line
    is begun, or at `deadline` (time.monotonic), wherever it is: a line begun is read
    again by the next call."""
    pos = offset  # file offset of buf[0]
    skipping = offset > 0 and os.pread(fd, 1, offset - 1) not in (b"\n", b"")
    buf = bytearray()
    read = 0
    while budget is None or read < budget or (buf and not skipping):
        if deadline is not None and read and time.monotonic() > deadline:
            return
        chunk = os.pread(fd, CHUNK, pos + len(buf))
        if not chunk:
            return
        read += len(chunk)
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                pos += len(chunk)
                yield None, pos
                continue
            skipping = False
            pos += nl + 1
            yield None, pos
            chunk = chunk[nl + 1 :]
        buf += chunk
        start = 0
        while (nl := buf.find(b"\n", start)) >= 0:
            yield bytes(buf[start : nl + 1]), pos + nl + 1
            start = nl + 1
        if start:
            del buf[:start]
            pos += start
        if len(buf) > MAX_LINE:
            if stats:
                stats.too_long += 1
            pos += len(buf)
            buf.clear()
            skipping = True
            yield None, pos


def decode_line(line: bytes, stats: ReadStats | None = None) -> list[dict[str, Any]]:
    """The JSON objects on one line: usually one, two when writes collided, none if broken."""
    fast = _msgspec()
    if fast is not None:
        obj = _fast_object(fast, line)  # the common line: one object, valid UTF-8, no NUL
        if obj is not None:
            if stats:
                stats.lines += 1
                stats.objects += 1
            return [obj]
    text = line.replace(b"\x00", b"").decode("utf-8", "replace").strip()
    if not text:
        return []
    if stats:
        stats.lines += 1
    out: list[dict[str, Any]] = []
    try:
        obj = _loads(text)
        if isinstance(obj, dict):
            out.append(obj)
    except (ValueError, RecursionError):
        pos = 0
        while pos < len(text):
            while pos < len(text) and text[pos] in " \t\r":
                pos += 1
            if pos >= len(text):
                break
            try:
                obj, end = _decoder.raw_decode(text, pos)
            except (ValueError, RecursionError):
                if stats:
                    stats.malformed += 1
                break
            if isinstance(obj, dict):
                out.append(obj)
            pos = end
    if stats:
        stats.objects += len(out)
    return out


def _fast_object(fast: Any, line: bytes) -> dict[str, Any] | None:
    """The line's one object as msgspec reads the bytes, or None for anything else (not
    UTF-8, a NUL, two objects, no object, what msgspec refuses): the str path decides.
    What msgspec reads from the bytes is what it reads from their text, json's."""
    try:
        obj = fast.decode(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _msgspec() -> Any:
    """msgspec's JSON decoder, or None while this process has not loaded msgspec."""
    if not _fast:
        if "msgspec" not in sys.modules:
            return None
        import msgspec

        _fast.append(msgspec.json.Decoder())
    return _fast[0]


def _loads(text: str) -> Any:
    """json.loads(text), by msgspec when it is loaded (about twice as fast on these lines,
    bench/RESULTS.md)."""
    fast = _msgspec()
    if fast is not None:
        try:
            return fast.decode(text)
        except (ValueError, RecursionError):  # msgspec's DecodeError is a ValueError
            pass  # NaN, a lone surrogate, 1e400, or broken: json reads it or says why
    return jsoncore.loads(text)


def read_from(
    path: str, offset: int = 0, stats: ReadStats | None = None, limit: int = -1
) -> tuple[list[dict[str, Any]], int]:
    """Objects of the complete lines after `offset` (about MAX_READ bytes' and
    MAX_SECONDS' worth at most), and the offset to read from next. A missing file gives
    ([], offset); one that is not a regular file raises NotRegularFile, another
    failure OSError. `limit` >= 0: only lines that end within its first `limit` bytes
    (the file as it stood when a hook measured it)."""
    objs: list[dict[str, Any]] = []
    end = offset
    for end, found in read_lines(path, offset, stats, limit):  # noqa: B007 (the last)
        objs.extend(found)
    return objs, end


def read_lines(
    path: str, offset: int = 0, stats: ReadStats | None = None, limit: int = -1
) -> list[tuple[int, list[dict[str, Any]]]]:
    """read_from line by line: (the offset after the line, its objects), so a reader
    that stops at a line knows where to read on from."""
    out, offset = handed.take_lines(path, offset, stats, limit)
    fd = open_regular(path)
    if fd is None:
        return out
    try:
        deadline = time.monotonic() + MAX_SECONDS
        for line, end in _lines(fd, offset, stats, MAX_READ, deadline):
            if 0 <= limit < end:
                break  # written after the hook looked
            out.append((end, decode_line(line, stats) if line is not None else []))
    finally:
        os.close(fd)
    return out


def line_start(path: str, size: int) -> int | None:
    """Where a reader starts to skip what the first `size` bytes (-1: all) hold: after
    their last newline, looked for at most MAX_LINE bytes back (further back, `size`
    itself, mid-line: the reader skips that too-long line). None: no file."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        end = os.fstat(fd).st_size
        end = end if size < 0 else min(size, end)
        pos = end
        while pos > 0 and end - pos < MAX_LINE:
            n = min(CHUNK, pos)
            nl = os.pread(fd, n, pos - n).rfind(b"\n")
            if nl >= 0:
                return pos - n + nl + 1
            pos -= n
        return 0 if pos == 0 else end
    finally:
        os.close(fd)


def iter_lines(
    path: str, stats: ReadStats | None = None
) -> Iterator[tuple[bytes, list[dict[str, Any]]]]:
    """(raw line, its objects) for every complete line of a whole file, the first
    MAX_FILE bytes of it (lines over MAX_LINE skipped, an incomplete tail too, as a
    live reader would). Raises OSError when it cannot be read (FileNotFoundError when
    there is none, NotRegularFile when it is not a regular file)."""
    fd = open_regular(path)
    if fd is None:
        raise FileNotFoundError(path)
    try:
        for line, end in _lines(fd, 0, stats, None):
            if end > MAX_FILE:
                if stats:
                    stats.truncated = True
                return
            if line is not None:
                yield line, decode_line(line, stats)
    finally:
        os.close(fd)


def iter_file(path: str, stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Every object of a whole file, as iter_lines reads it (or as a replay read it a
    moment ago: hand_file)."""
    whole = handed.take_file(path, stats)
    if whole is not None:
        yield from whole
        return
    for _, objs in iter_lines(path, stats):
        yield from objs


def read_at(path: str, start: int, length: int) -> bytes | None:
    """At most `length` bytes from `start` of the regular file at `path`; None when
    there is none, it is not a regular file, or it cannot be read."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    if fd is None:
        return None
    try:
        return os.pread(fd, max(0, length), max(0, start))
    except OSError:
        return None
    finally:
        os.close(fd)


def first_line(path: str, limit: int = HEAD_LINE) -> bytes:
    """The file's first line (at most `limit` bytes of it); b"" when it cannot be read."""
    data = read_at(path, 0, limit)
    return data.split(b"\n", 1)[0] if data else b""


def next_line(path: str, pos: int) -> int:
    """The offset of the first line starting at or after `pos` (after at most MAX_LINE
    bytes; further, `pos` + MAX_LINE, where a reader skips to the next line itself)."""
    if pos <= 0:
        return 0
    at = pos - 1  # a line starts at `pos` when the byte before it ends one
    while at < pos + MAX_LINE:
        data = read_at(path, at, CHUNK)
        if not data:
            return pos if at == pos - 1 else at
        nl = data.find(b"\n")
        if nl >= 0:
            return at + nl + 1
        at += len(data)
    return at


def check(path: str) -> bool:
    """True unless `path` names something other than a regular file, when it raises
    NotRegularFile (OSError when it cannot be opened); a missing file passes: the agent
    may yet write it."""
    fd = open_regular(path)
    if fd is not None:
        os.close(fd)
    return True
