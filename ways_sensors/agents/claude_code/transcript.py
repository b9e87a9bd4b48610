"""Reading Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`) robustly.

The format is undocumented and written while we read it, so (reference §4.11):
a line that does not parse is skipped without losing its neighbours; two objects on
one line are split with `raw_decode`; NUL padding is dropped; only complete lines
(ending in a newline) are consumed, so a half-written last line is read later, whole;
unknown types and fields are ignored; order is file order, never timestamps.

The path comes from the payload, so it is read within bounds, whatever it names: only
a regular file is read (opened O_NONBLOCK, then fstat'd: a FIFO, a device such as
/dev/zero or a folder raises NotRegularFile; a symlink is followed, since the payload
could name the target itself, and what it leads to must be regular too); reading
goes from the tracked offset in CHUNK pieces, at most about MAX_READ bytes per call
(plus the rest of a line already begun); a line longer than MAX_LINE is never held
whole: it is skipped to its newline, across calls if need be, and counted
(`ReadStats.too_long`). A reader handed an offset in the middle of a line (after
such a skip, or a fast-forward that found no newline) skips to the next one.

This module only turns bytes into objects and classifies lines; what they mean for
records is decided in tracker.py and replay.py, so the dispatcher and `ways sensors
test` share it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_decoder = json.JSONDecoder()
CHUNK = 1 << 20  # bytes per read
MAX_LINE = 8 << 20  # a longer line is skipped, never held (Claude Code's are far shorter)
MAX_READ = 8 << 20  # bytes read per call, past which it stops at the next line end
INTERRUPT_MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
_NOT_PROMPT_PREFIXES = (
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<command-stdout>",
)


@dataclass
class ReadStats:
    lines: int = 0
    objects: int = 0
    malformed: int = 0
    too_long: int = 0  # lines over MAX_LINE, skipped


class NotRegularFile(OSError):
    """The transcript path names something that is not a regular file."""


def _open(path: str) -> int | None:
    """A descriptor on the regular file at `path`; None when there is none yet."""
    try:
        # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer
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
    fd: int, offset: int, stats: ReadStats | None, budget: int | None
) -> Iterator[tuple[bytes | None, int]]:
    """(line, the offset after it) for each complete line from `offset`; (None, offset)
    as a too-long line is skipped up to `offset`. Stops at the end of the file (an
    incomplete last line is left for later), or once `budget` bytes are read and no
    line is begun."""
    pos = offset  # file offset of buf[0]
    skipping = offset > 0 and os.pread(fd, 1, offset - 1) not in (b"\n", b"")
    buf = bytearray()
    read = 0
    while budget is None or read < budget or (buf and not skipping):
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
    text = line.replace(b"\x00", b"").decode("utf-8", "replace").strip()
    if not text:
        return []
    if stats:
        stats.lines += 1
    try:
        obj = json.loads(text)
        out = [obj] if isinstance(obj, dict) else []
    except (ValueError, RecursionError):
        out = []
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


def read_from(
    path: str, offset: int = 0, stats: ReadStats | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Objects of the complete lines after `offset` (about MAX_READ bytes' worth at
    most), and the offset to read from next. A missing file gives ([], offset); one
    that is not a regular file raises NotRegularFile, another failure OSError."""
    fd = _open(path)
    if fd is None:
        return [], offset
    objs: list[dict[str, Any]] = []
    end = offset
    try:
        for line, end in _lines(fd, offset, stats, MAX_READ):  # noqa: B007 (end: the last)
            if line is not None:
                objs.extend(decode_line(line, stats))
    finally:
        os.close(fd)
    return objs, end


def line_start(path: str, size: int) -> int | None:
    """Where a reader starts to skip what the first `size` bytes (-1: all) hold: after
    their last newline, looked for at most MAX_LINE bytes back (further back, `size`
    itself, mid-line: the reader skips that too-long line). None: no file."""
    fd = _open(path)
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


def iter_file(path: str, stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Every object of a whole transcript, line by line (lines over MAX_LINE skipped,
    an incomplete tail too, as a live reader would). Raises OSError when it cannot be
    read (NotRegularFile when it is not a regular file)."""
    fd = _open(path)
    if fd is None:
        raise FileNotFoundError(path)
    try:
        for line, _ in _lines(fd, 0, stats, None):
            if line is not None:
                yield from decode_line(line, stats)
    finally:
        os.close(fd)


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the `text` blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def classify_user(obj: dict[str, Any]) -> str:
    """What a `user` line is: prompt, tool_result, summary, meta, command_output, interrupt."""
    if obj.get("isCompactSummary"):
        return "summary"
    if "toolUseResult" in obj:
        return "tool_result"
    msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
    content = msg.get("content")
    if (
        isinstance(content, list)
        and content
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    ):
        return "tool_result"
    if obj.get("isMeta"):
        return "meta"
    text = message_text(content).lstrip()
    if text.startswith(_NOT_PROMPT_PREFIXES):
        return "command_output"
    if text in INTERRUPT_MARKERS or text.startswith(INTERRUPT_MARKERS):
        return "interrupt"
    return "prompt"
