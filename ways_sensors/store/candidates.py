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

A query of one or two ASCII characters has no trigram of its own (short()):

1. The records are walked newest first for at most BUDGET seconds: a common text (`ok`,
   `e`) fills its limit at once, and is done.
2. Cut at the budget: the index's vocabulary (fts5vocab, read by a range of terms) lists
   the trigrams that begin with the query, folded as the tokenizer folds ASCII; the
   records holding any of them are asked for, the substring checked on each. Every
   occurrence begins a trigram, even at a text's end: the index holds each text with
   schema.PAD after it. No such trigram: no record holds the query.
3. The vocabulary itself cut at VOCAB_BUDGET (the query's trigrams list most of the
   index: a common letter under a narrow filter), or more than TERMS_MAX of them: the
   walk of step 1 runs to its end.

The budget is a choice of plan, never of answer: a slow machine takes the later steps
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
VOCAB_BUDGET = 0.1  # seconds the vocabulary may take to list a short query's trigrams
TERMS_MAX = 4000  # trigrams a short query's OR may name
VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.records_vocab "
    "USING fts5vocab(main, records_fts, 'row')"
)


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


def short(conn: sqlite3.Connection, fts: str, scan: str, query: str, args: list[Any]) -> list[Any]:
    """The rows of `scan` (every record, newest first) for a query of one or two ASCII
    characters, or the same rows through `fts` (its first parameter the MATCH), as the
    module docstring says."""
    try:
        return _within(conn, scan, args, BUDGET)
    except _Slow:
        pass
    try:
        grams = _beginning(conn, query.lower())
    except _Slow:
        grams = None
    if grams is None or len(grams) > TERMS_MAX:
        return conn.execute(scan, args).fetchall()
    if not grams:
        return []
    return conn.execute(fts, [any_of(grams), *args]).fetchall()


def _beginning(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """The index's trigrams that begin with `prefix` (ASCII, folded)."""
    conn.execute(VOCAB)
    stop = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    sql = "SELECT term FROM temp.records_vocab WHERE term >= ? AND term < ?"
    return [t for (t,) in _within(conn, sql, [prefix, stop], VOCAB_BUDGET)]


def any_of(grams: list[str]) -> str:
    """An FTS5 query for the records holding any one of `grams`."""
    return " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)


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
