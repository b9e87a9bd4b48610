"""Reading a chained file for `verify`: bounded lines, each reduced to an Entry.

Lines are decoded as the dispatcher encodes them (UTF-8 with lone surrogates passed
through). A line over LINE_CAP is skipped in CHUNK reads, never held whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..index import MAX_PAYLOAD
from ..pipeline import chain
from .breaks import Break
from .formats import from_text

# A record is built from one hook payload (at most MAX_PAYLOAD) plus transcript text,
# and masking can lengthen it; no genuine line comes near four payloads.
LINE_CAP = 4 * MAX_PAYLOAD
CHUNK = 1 << 20
Key = tuple[str, str, str]  # (sensor, rule, session_id): one chain


@dataclass
class Entry:
    """One chained record, reduced to what checking needs (files can be large)."""

    line: int
    key: Key
    seq: int | None  # None when not an integer
    prev: str
    hash: str
    sealed: bool  # its hash matches its content
    path: str = ""  # the file holding it


RECORD_START = '{"schema":"ways.sensor.'


def bounded_lines(f: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes), None for a line over LINE_CAP, which is skipped in chunks."""
    n = 0
    while True:
        line = f.readline(LINE_CAP + 1)
        if not line:
            return
        n += 1
        if len(line) > LINE_CAP and not line.endswith(b"\n"):
            del line
            while True:
                rest = f.readline(CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield n, None
        else:
            yield n, line


def _parse(n: int, line: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        text = line.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None, f"line {n} is not valid UTF-8"
    if text.startswith(RECORD_START) and text.rfind(RECORD_START) > 0:
        try:  # one record whole, or a torn one the next record continues
            json.loads(text)
        except ValueError:
            return _after_torn(n, text)
        except RecursionError:
            return None, f"line {n} is nested too deeply to be a record"
    try:
        obj = from_text(text)  # any format ways writes (formats.py)
    except RecursionError:
        return None, f"line {n} is nested too deeply to be a record"
    except ValueError:
        obj = None
    if obj is None:
        return _after_torn(n, text)
    if isinstance(obj, dict) and obj.get("section") == "checkpoint" and "chain" not in obj:
        return None, ""  # a signed checkpoint, outside the chain: `verify --key` checks it
    if not isinstance(obj, dict) or not isinstance(obj.get("chain"), dict):
        return None, f"line {n} is not a chained record"
    return obj, ""


def _after_torn(n: int, line: str) -> tuple[dict[str, Any] | None, str]:
    """A receiver killed mid-line (rsyslog's omfile under SIGKILL) leaves an unfinished
    line that the next record, written after its restart, continues: the record after
    the last record start is read, the torn part before it reported on its own."""
    at = line.rfind(RECORD_START)
    if at <= 0:
        return None, f"line {n} is not a chained record"
    try:
        obj = json.loads(line[at:])
    except (ValueError, RecursionError):
        return None, f"line {n} is not a chained record"
    if not isinstance(obj, dict) or not isinstance(obj.get("chain"), dict):
        return None, f"line {n} is not a chained record"
    return obj, TORN.format(n=n, size=at)


TORN = "line {n} begins with {size} bytes of an unfinished line (a writer killed mid-line)"


def text(value: Any) -> str:
    """A field as text; a nested value as its type only (its repr could recurse)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    return f"<{type(value).__name__}>"


def scan(path: str, want: Callable[[Key], bool] | None) -> tuple[list[Entry], list[Break], int]:
    """(records `want` keeps, lines that are no records, non-blank lines)."""
    entries: list[Entry] = []
    bad: list[Break] = []
    count = 0
    with open(path, "rb") as f:
        for n, line in bounded_lines(f):
            if line is not None and not line.strip():
                continue
            count += 1
            if line is None:
                bad.append(Break("edited", f"line {n} is over {LINE_CAP >> 20} MiB", line=n))
                continue
            rec, why = _parse(n, line)
            if rec is None:
                if why:
                    bad.append(Break("edited", why, line=n))
                else:
                    count -= 1  # a checkpoint is no record
                continue
            if why:  # a torn line before this record: reported, the record still read
                bad.append(Break("torn", why, line=n))
            key = (text(rec.get("sensor")), text(rec.get("rule")), text(rec.get("session_id")))
            if want is not None and not want(key):
                continue
            link = rec["chain"]
            prev, seq = text(link.get("prev")), rec.get("rule_seq")
            try:
                sealed = chain.link(prev, rec) == link.get("hash")
            except (ValueError, RecursionError):
                sealed = False
            if not isinstance(seq, int) or isinstance(seq, bool):
                seq = None  # whatever it was (a list cannot even be looked up)
            entries.append(Entry(n, key, seq, prev, text(link.get("hash")), sealed, path))
    return entries, bad, count
