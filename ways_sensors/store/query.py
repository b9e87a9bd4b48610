"""What `ways sessions` reads from the store: sessions, a session's records, a search.

Search semantics (the brute-force oracle in tests/store/test_search_oracle.py is this
paragraph): a record matches when its `text` (schema.py) contains the query as a
substring, letters compared case-insensitively, and every filter given holds. An ASCII
query folds A-Z on both sides (SQLite's lower()); any other, Python's lower(); accents
are kept. A query of three characters or more asks the FTS5 trigram index for the
records holding its rare trigrams (store/candidates.py says which), then checks the
substring; a shorter ASCII one walks the newest records for a moment, then asks the
index for the trigrams it begins (candidates.short); a shorter one with another letter
scans the records. Results come most recently
stored first (the index's rowid order, walked backwards, so a search stops at its limit
instead of sorting every match: the trigram index keeps no positions, so FTS5's bm25
would rank by little more than length).

Filters are exact matches on the columns of schema.py, `since`/`until` compare ISO UTC
timestamps (a prefix such as `2026-12-01` works), `rule` is `sensor/rule`, `user` the
user id of the record's identity (fleet/identity.py). The team store on PostgreSQL
(store/pgquery.py) answers the same questions with the same semantics.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, fields
from typing import Any

from . import candidates

HIT = "\x02"  # where a match begins and ends in a marked text (snippet() reads them)
END = "\x03"
CONTEXT = 80  # characters of text kept either side of a search's first match


RECORD_COLUMNS = frozenset(
    {
        "agent",
        "section",
        "tool",
        "tool_kind",
        "project",
        "session_id",
        "model",
        "outcome",
        "user_id",
    }
)
SESSION_COLUMNS = frozenset({"agent", "project", "session_id", "model", "outcome", "user_id"})
# what a search reads of each hit (hit() takes them in this order, the text last)
HIT_COLUMNS = (
    "r.id, r.session_id, r.ts, r.agent, r.sensor, r.rule, r.section, r.tool, "
    "r.seq, r.rule_seq, r.imported, r.text"
)


@dataclass(frozen=True)
class Filters:
    agent: str | None = None
    section: str | None = None
    tool: str | None = None
    tool_kind: str | None = None
    project: str | None = None
    user: str | None = None
    session: str | None = None
    model: str | None = None
    outcome: str | None = None
    rule: str | None = None
    since: str | None = None
    until: str | None = None
    imported: bool | None = None

    def where(self, table: str) -> tuple[list[str], list[Any]]:
        """SQL conditions over `table` (`r`: records, `s`: sessions) for the filters that
        table has columns for (a session's span overlaps since..until)."""
        columns = RECORD_COLUMNS if table == "r" else SESSION_COLUMNS
        conds: list[str] = []
        args: list[Any] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "since":
                conds.append(f"{table}.{'ts' if table == 'r' else 'last_ts'} >= ?")
            elif f.name == "until":  # a prefix (a date) takes in all it names
                conds.append(f"substr({table}.{'ts' if table == 'r' else 'first_ts'}, 1, ?) <= ?")
                args.append(len(value))
            elif f.name == "imported":
                conds.append(f"{table}.imported = ?")
                value = 1 if value else 0
            elif f.name == "rule":
                if table != "r":
                    continue
                sensor, _, rule = str(value).partition("/")
                conds.append("r.sensor = ? AND r.rule = ?")
                args.extend([sensor, rule])
                continue
            else:
                column = {"session": "session_id", "user": "user_id"}.get(f.name, f.name)
                if column not in columns:
                    continue
                conds.append(f"{table}.{column} = ?")
            args.append(value)
        return conds, args


def sessions(conn: sqlite3.Connection, f: Filters, limit: int = 0) -> list[dict[str, Any]]:
    """Sessions newest first (by their last record); record-level filters (section,
    tool, rule) keep the sessions holding at least one such record."""
    conds, args = f.where("s")
    record_level = Filters(section=f.section, tool=f.tool, tool_kind=f.tool_kind, rule=f.rule)
    rconds, rargs = record_level.where("r")
    if rconds:
        conds.append(
            "EXISTS (SELECT 1 FROM records r WHERE r.session_id = s.session_id AND "
            + " AND ".join(rconds)
            + ")"
        )
        args.extend(rargs)
    sql = "SELECT * FROM sessions s"
    if conds:
        sql += " WHERE " + " AND ".join(conds)
    sql += " ORDER BY s.last_ts DESC, s.session_id"
    if limit > 0:
        sql += f" LIMIT {int(limit)}"
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def session(conn: sqlite3.Connection, sid: str) -> dict[str, Any] | None:
    cur = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (sid,))
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cur.description], row, strict=True))


def records(conn: sqlite3.Connection, sid: str) -> list[dict[str, Any]]:
    """The session's records in order (spool order, then time); a record two store
    rules both delivered is given once."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()
    cur = conn.execute(
        "SELECT seq, section, record FROM records WHERE session_id = ? "
        "ORDER BY seq IS NULL, seq, ts, id",
        (sid,),
    )
    for seq, section, text in cur:
        if seq is not None:
            if (seq, section) in seen:
                continue
            seen.add((seq, section))
        out.append(json.loads(text))
    return out


def search(
    conn: sqlite3.Connection, query: str, f: Filters, limit: int = 0
) -> list[dict[str, Any]]:
    """Records matching `query` and the filters, the most recently stored first (the
    module docstring)."""
    conds, args = f.where("r")
    cols = HIT_COLUMNS
    if query.isascii():  # SQLite's own lower() folds A-Z, all an ASCII query can match
        folded = "lower(r.text)"
    else:  # Python's lower() on both sides, as the oracle's
        conn.create_function("ways_lower", 1, _lower, deterministic=True)
        folded = "ways_lower(r.text)"
    # the records holding the query's trigrams (store/candidates.py), then the
    # substring itself; or every record, newest first
    fts = (
        f"SELECT {cols} FROM records_fts JOIN records r ON r.id = records_fts.rowid "
        f"WHERE records_fts MATCH ? AND instr({folded}, ?) > 0"
    )
    scan = f"SELECT {cols} FROM records r WHERE instr({folded}, ?) > 0"
    tail = "".join(" AND " + c for c in conds)
    cap = f" LIMIT {int(limit)}" if limit > 0 else ""
    fts += tail + " ORDER BY records_fts.rowid DESC" + cap  # FTS5 walks its index that way
    scan += tail + " ORDER BY r.id DESC" + cap
    args = [query.lower(), *args]  # the MATCH, before them, is candidates'
    if len(query) >= 3:
        found = candidates.rows(conn, fts, query, args)
    elif query.isascii():
        found = candidates.short(conn, fts, scan, query, args)
    else:
        found = conn.execute(scan, args).fetchall()
    return [hit(row, query) for row in found]


def hit(row: Any, query: str) -> dict[str, Any]:
    """A search's answer for one record (HIT_COLUMNS' row): where it is, and its text
    around the first match."""
    rid, sid, ts, agent, sensor, rule, section, tool, seq, rule_seq, imported, text = row
    return {
        "id": rid,
        "session_id": sid,
        "timestamp": ts,
        "agent": agent,
        "rule": f"{sensor}/{rule}",
        "section": section,
        "tool": tool,
        "seq": seq,
        "rule_seq": rule_seq,
        "imported": bool(imported),
        **snippet(_mark(text, query)),
    }


def folds(text: str, query: str) -> bool:
    """The match itself, as the SQL above checks it: an ASCII query folds A-Z alone on
    both sides (SQLite's lower()), any other Python's lower()."""
    if query.isascii():
        return query.lower() in text.translate(ASCII_LOWER)
    return query.lower() in text.lower()


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: object) -> str | None:
    return text.lower() if isinstance(text, str) else None


def _mark(text: str, query: str) -> str:
    """`text` with every case-insensitive occurrence of `query` marked."""
    lowered, q = text.lower(), query.lower()
    if not q or len(lowered) != len(text):  # a letter whose lower case is longer: unmarked
        return text
    out, pos = [], 0
    while (at := lowered.find(q, pos)) >= 0:
        out += [text[pos:at], HIT, text[at : at + len(q)], END]
        pos = at + len(q)
    out.append(text[pos:])
    return "".join(out)


def snippet(marked: str) -> dict[str, Any]:
    """The text around the first match, one line, and where the matches are in it:
    {"snippet": str, "highlights": [[start, end], ...]} (offsets into the snippet)."""
    first = marked.find(HIT)
    start = max(first - CONTEXT, 0) if first >= 0 else 0
    end_at = marked.find(END, first) if first >= 0 else -1
    stop = min((end_at if end_at >= 0 else start) + CONTEXT, len(marked))
    last = marked.rfind(HIT, start, stop)
    if last >= 0:  # never cut a match: the window takes in the whole of its last one
        stop = max(stop, marked.find(END, last) + 1)
    piece = marked[start:stop]
    text, spans, open_at = [], [], -1
    pos = 0
    for ch in piece:
        if ch == HIT:
            open_at = pos
        elif ch == END:
            if open_at >= 0:
                spans.append([open_at, pos])
            open_at = -1
        else:
            text.append(" " if ch in "\n\r\t" else ch)
            pos += 1
    if open_at >= 0:
        spans.append([open_at, pos])
    prefix = "…" if start > 0 else ""
    suffix = "…" if stop < len(marked) else ""
    shift = len(prefix)
    return {
        "snippet": prefix + "".join(text) + suffix,
        "highlights": [[a + shift, b + shift] for a, b in spans],
    }


class Local:
    """The embedded store's answers (services/sessions.py's Reader; store/pgquery.py's
    Team gives the team store's)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def sessions(self, f: Filters, limit: int = 0) -> list[dict[str, Any]]:
        return sessions(self.conn, f, limit)

    def session(self, sid: str) -> dict[str, Any] | None:
        return session(self.conn, sid)

    def records(self, sid: str) -> list[dict[str, Any]]:
        return records(self.conn, sid)

    def search(self, q: str, f: Filters, limit: int = 0) -> list[dict[str, Any]]:
        return search(self.conn, q, f, limit)
