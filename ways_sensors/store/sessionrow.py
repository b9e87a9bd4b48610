"""A session's row after several new records of one batch: schema.UPSERT_SESSION applied
once per record, in their order, folded in Python and written once.

A batch of a live rule is one session's records, and an import's batch is one file's, so
a batch's records nearly always share one row; one upsert a record cost a statement
each. fold() gives the row the upserts would have left, field by field as the SQL has
it (the text columns compare as SQLite's BINARY collation does, by code point; the cost
adds in the same order), read from the row there was before the batch, if any.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from . import schema

# the sessions table's columns, in the order of FOLDED's values
COLUMNS = (
    "session_id",
    "agent",
    "project",
    "first_ts",
    "last_ts",
    "records",
    "prompts",
    "tools",
    "model",
    "cost",
    "outcome",
    "first_prompt",
    "imported",
    "user_id",
)
SELECT = f"SELECT {', '.join(COLUMNS)} FROM sessions WHERE session_id = ?"
FOLDED = f"INSERT OR REPLACE INTO sessions ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * 14)})"


def share_row(values: tuple[Any, ...]) -> dict[str, Any]:
    """One record's share (schema.session_values: UPSERT_SESSION's values, which leave
    out `records`, 1 in the SQL) as a row of its own."""
    sid, agent, project, first, last, *rest = values
    return dict(zip(COLUMNS, (sid, agent, project, first, last, 1, *rest), strict=True))


def fold(row: dict[str, Any] | None, shares: list[tuple[Any, ...]]) -> dict[str, Any]:
    """`row` (None: none yet; changed in place) after UPSERT_SESSION of each share, in
    order."""
    first = 0 if row is not None else 1
    s = row if row is not None else share_row(shares[0])
    for share in shares[first:]:
        _, _, project, ts, last, prompts, tools, model, cost, outcome, prompt, imported, user = (
            share
        )
        if s["first_prompt"] is None or ts < s["first_ts"]:
            s["first_prompt"] = prompt if prompt is not None else s["first_prompt"]
        if ts < s["first_ts"]:
            s["first_ts"] = ts
        if last > s["last_ts"]:
            s["last_ts"] = last
        s["records"] += 1
        s["prompts"] += prompts
        s["tools"] += tools
        if model is not None:
            s["model"] = model
        if cost is not None:
            s["cost"] = (s["cost"] if s["cost"] is not None else 0) + cost
        if outcome is not None:
            s["outcome"] = outcome
        s["imported"] = min(s["imported"], imported)
        if s["project"] is None:
            s["project"] = project
        if s["user_id"] is None:
            s["user_id"] = user
    return s


def write(conn: sqlite3.Connection, shares: dict[str, list[tuple[Any, ...]]]) -> None:
    """Each session's shares of one batch into its row, inside the caller's transaction:
    one share by schema.UPSERT_SESSION itself, several folded and written once."""
    for sid, values in shares.items():
        if len(values) == 1:
            conn.execute(schema.UPSERT_SESSION, values[0])
            continue
        got = conn.execute(SELECT, (sid,)).fetchone()
        row = fold(dict(zip(COLUMNS, got, strict=True)) if got else None, values)
        conn.execute(FOLDED, tuple(row[c] for c in COLUMNS))
