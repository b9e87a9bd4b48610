"""Which trigrams a search asks the FTS5 index for (store/query.py checks the substring
itself on each candidate, so any choice here is exact; it only decides the cost).

FTS5 reads the whole list of every trigram an AND names, and a common trigram (`.py`,
`the`, `mod`) lists most records: on a store of 1,000,000 records, a rare path asked
for with all its trigrams read a dozen lists of a million entries (390 ms). So:

1. Each trigram is counted up to PROBES[0] (a count stops at its cap: a common trigram
   costs the cap's entries, not its list). Some under it: the rarest of them are asked.
2. None: the query runs with all its trigrams for at most BUDGET seconds. A common
   text (`refactor`) fills its limit at once, newest first, and is done.
3. Cut at the budget: the trigrams are counted up to PROBES[1]; the rarest under it are
   asked, or all when none is (every trigram common: the limit ends the walk).

The budget is a choice of plan, never of answer: a slow machine takes the third step
more often and gets the same records.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

PROBES = (1000, 16_000)
RARE_MAX = 4  # trigrams asked for at most
BUDGET = 0.025  # seconds the query with every trigram may run before step 3
STEPS = 20  # SQLite VM steps between looks at the clock (FTS5 walks inside one)


def trigrams(query: str) -> list[str]:
    return list(dict.fromkeys(query[i : i + 3] for i in range(len(query) - 2)))


def match(grams: list[str]) -> str:
    """An FTS5 query for the records holding every one of `grams`, each one quoted: one
    token of the trigram tokenizer, which folds its case as it folds the text's."""
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


def rows(conn: sqlite3.Connection, sql: str, query: str, args: list[Any]) -> list[Any]:
    """The rows of `sql` (its first parameter the MATCH) for `query`, the plan chosen as
    the module docstring says."""
    grams = trigrams(query)
    if len(grams) <= 2:
        return conn.execute(sql, [match(grams), *args]).fetchall()
    rare = _rarest(conn, grams, PROBES[0])
    if rare:
        return conn.execute(sql, [match(rare), *args]).fetchall()
    try:
        return _within(conn, sql, [match(grams), *args], BUDGET)
    except _Slow:
        pass
    rare = _rarest(conn, grams, PROBES[1])
    return conn.execute(sql, [match(rare or grams), *args]).fetchall()


def _rarest(conn: sqlite3.Connection, grams: list[str], cap: int) -> list[str]:
    sql = "SELECT count(*) FROM (SELECT rowid FROM records_fts WHERE records_fts MATCH ? LIMIT ?)"
    counts = sorted((int(conn.execute(sql, (match([g]), cap)).fetchone()[0]), g) for g in grams)
    return [g for n, g in counts if n < cap][:RARE_MAX]


class _Slow(Exception):
    pass


def _within(conn: sqlite3.Connection, sql: str, args: list[Any], budget: float) -> list[Any]:
    deadline = time.monotonic() + budget
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), STEPS)
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc):
            raise _Slow from None
        raise
    finally:
        conn.set_progress_handler(None, STEPS)
