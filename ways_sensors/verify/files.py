"""Which files `verify` reads: the ones named (folders walked), and their dated siblings.

A file target's `{date}` renders as YYYY-MM-DD (targets/file.py), one per record, so a
chain may go on in a file whose path differs only in that date. For each file checked,
every path that differs from it only where it holds a YYYY-MM-DD (each such spot may
be any date) is read too, nearest dates first and at most MAX_SIBLINGS of them, for
the records around its chains; those files are not themselves reported on unless
named. Walking a folder takes its regular files (links are not followed), sorted, at
most MAX_FILES.
"""

from __future__ import annotations

import glob
import os
import re

MAX_FILES = 10_000
MAX_SIBLINGS = 400  # dated files looked at around one file (over a year of days)
DATE = re.compile(r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9])")
_GLOB_DATE = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"


class TooMany(Exception):
    """A folder holds more than MAX_FILES files."""


def expand(paths: list[str]) -> list[str]:
    """The files named, and every regular file under each folder named (sorted)."""
    out: list[str] = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        found = []
        for top, dirs, names in os.walk(p):
            dirs.sort()
            for n in sorted(names):
                full = os.path.join(top, n)
                if os.path.isfile(full) and not os.path.islink(full):
                    found.append(full)
                    if len(found) > MAX_FILES:
                        raise TooMany(p)
        out.extend(found)
    return list(dict.fromkeys(out))


def siblings(path: str) -> list[str]:
    """Files whose path differs from `path` only in its dates, nearest date first."""
    dates = DATE.findall(path)
    if not dates:
        return []
    pattern = "".join(
        glob.escape(part) if i % 2 == 0 else _GLOB_DATE for i, part in enumerate(_split(path))
    )
    found = []
    for i, p in enumerate(glob.iglob(pattern)):
        if i >= 20 * MAX_SIBLINGS:
            break
        if p != path and os.path.isfile(p) and not os.path.islink(p):
            found.append(p)
    own = dates[0]
    found.sort(key=lambda p: (_distance(own, DATE.findall(p)[:1]), p))
    return found[:MAX_SIBLINGS]


def _split(path: str) -> list[str]:
    """`path` cut around its dates: text, date, text, date, ..., text."""
    out, pos = [], 0
    for m in DATE.finditer(path):
        out += [path[pos : m.start()], m.group(0)]
        pos = m.end()
    return [*out, path[pos:]]


def _distance(a: str, b: list[str]) -> int:
    if not b:
        return 1 << 30
    from datetime import date

    try:
        return abs((date.fromisoformat(a) - date.fromisoformat(b[0])).days)
    except ValueError:
        return 1 << 30
