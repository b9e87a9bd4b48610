"""What a replay hands the builder it feeds: objects it decoded already.

A replay (agents/kit/replaying.py) copies the recorded file to a scratch file line by
line, and the agent's builder reads that copy (sessionfile.read_lines) as it would read
the live file; Claude Code's replay also reads each subagent's file whole, which the
builder reads whole again at the SubagentStop. Decoding the same bytes twice was a
large share of an import's CPU (bench/RESULTS.md), so the replay hands over what it
decoded and the reader takes it instead of the bytes:

    lines  by path, then by a line's offset: (the offset after it, its objects), each
           taken once; at most HANDED_MAX bytes of lines wait (past that a line is
           not handed, and is read from the file as before)
    file   the last whole file handed, with its identity (device, inode, size,
           modification time) from before the replay read it: taken once, and only
           while the file is unchanged since

The objects are shared, not copied: neither a replay nor a builder changes an object
it read. Nothing is handed outside a replay, so a dispatcher's reads are the file's.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Objects = list[dict[str, Any]]
    ReadStats = Any  # sessionfile.ReadStats, which imports this module

HANDED_MAX = 16 << 20  # bytes of handed lines waiting for the reader, per path
_lines: dict[str, dict[int, tuple[int, Objects]]] = {}
_bytes: dict[str, int] = {}
_file: dict[str, tuple[tuple[int, ...], Objects, int]] = {}


def hand_line(path: str, start: int, end: int, objs: Objects) -> None:
    """The line from `start` to `end` of `path` decodes to `objs`."""
    held = _bytes.get(path, 0) + end - start
    if held <= HANDED_MAX:
        _lines.setdefault(path, {})[start] = (end, objs)
        _bytes[path] = held


def take_lines(
    path: str, offset: int, stats: ReadStats | None, limit: int
) -> tuple[list[tuple[int, Objects]], int]:
    """The handed lines of `path` from `offset` on that end within `limit` (-1: any),
    counted in `stats` as decoding counts them, and the offset after the last."""
    out: list[tuple[int, Objects]] = []
    lines = _lines.get(path)
    while lines and (entry := lines.get(offset)) is not None and not 0 <= limit < entry[0]:
        del lines[offset]
        _bytes[path] -= entry[0] - offset
        if stats:
            stats.lines += 1
            stats.objects += len(entry[1])
        out.append(entry)
        offset = entry[0]
    return out, offset


def identity(path: str) -> tuple[int, ...] | None:
    """What tells one version of a file from another; None when there is no file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def hand_file(path: str, before: tuple[int, ...] | None, objs: Objects, lines: int) -> None:
    """`objs` (of `lines` lines) read whole from `path`, whose identity() was `before`."""
    _file.clear()
    if before is not None:
        _file[path] = (before, objs, lines)


def take_file(path: str, stats: ReadStats | None) -> Objects | None:
    """The objects handed for `path` if it is unchanged since, else None."""
    got = _file.pop(path, None)
    if got is None or got[0] != identity(path):
        return None
    if stats:
        stats.lines += got[2]
        stats.objects += len(got[1])
    return got[1]


def forget(path: str) -> None:
    """A replay's end: what it handed for its scratch copy `path`, and any whole file."""
    _lines.pop(path, None)
    _bytes.pop(path, None)
    _file.clear()
