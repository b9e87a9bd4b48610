"""What `ways sessions --store postgresql://...` reads from the team store: the same
questions as store/query.py, with the same answers on the same records.

list, show and a session's records are query.py's own SQL (placeholders written for
psycopg). Search asks the pg_trgm index of `records.folded` (the text in Python's lower
case, store/postgres.py) for `folded LIKE '%query%'`: for a query with a non-ASCII
letter that is the match itself; for an ASCII one (which folds A-Z alone, as SQLite's
lower() does) it may also find a text where another letter lowers to ASCII (the Kelvin
sign), so every row is checked again by query.folds() before it is a hit, and rows are
read newest first until the limit is met. A query of one or two characters has no
trigram: PostgreSQL walks the records newest first instead, as SQLite's scan does.

The plan (as store/candidates.py's for SQLite): PostgreSQL's own choice runs for at most
BUDGET; it walks the primary key backwards for a text it expects often (a common word
fills its limit at once) and may expect a rare one often too (on 1,000,000 records it
walked them all for a query found nowhere). Past the budget, the query runs again
ordered by `id + 0`, which no index gives, so the trigram index finds the rows and they
are sorted. A choice of plan, never of answer.
"""

from __future__ import annotations

from typing import Any

from . import query

CHUNK_MIN = 200  # rows read at a time while a search fills its limit
BUDGET_MS = 50  # PostgreSQL's own plan for a search's first rows, before the index's


class _Cursor:
    """psycopg's connection behind query.py's calls: `?` placeholders become `%s`."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Any = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s"), tuple(args))


class Team:
    """The team store's answers (services/sessions.py's Reader)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.sql = _Cursor(conn)

    def close(self) -> None:
        self.conn.close()

    def sessions(self, f: query.Filters, limit: int = 0) -> list[dict[str, Any]]:
        return query.sessions(self.sql, f, limit)  # type: ignore[arg-type]  # duck: execute()

    def session(self, sid: str) -> dict[str, Any] | None:
        return query.session(self.sql, sid)  # type: ignore[arg-type]  # duck: execute()

    def records(self, sid: str) -> list[dict[str, Any]]:
        return query.records(self.sql, sid)  # type: ignore[arg-type]  # duck: execute()

    def search(self, q: str, f: query.Filters, limit: int = 0) -> list[dict[str, Any]]:
        conds, args = f.where("r")
        sql = f"SELECT {query.HIT_COLUMNS} FROM records r WHERE r.folded LIKE ?"
        if conds:
            sql += " AND " + " AND ".join(conds)
        args = [f"%{_like(q.lower())}%", *args]
        chunk = max(limit, CHUNK_MIN) if limit > 0 else 0
        hits: list[dict[str, Any]] = []
        before = None
        while True:
            page = sql + (" AND r.id < ?" if before is not None else "") + " ORDER BY r.id DESC"
            page += f" LIMIT {chunk}" if chunk else ""
            page_args = [*args, before] if before is not None else args
            if before is None and len(q) >= 3:
                rows = self._planned(page, page_args)
            else:
                rows = self.sql.execute(page, page_args).fetchall()
            for row in rows:
                if query.folds(row[-1], q):
                    hits.append(query.hit(row, q))
                    if limit > 0 and len(hits) == limit:
                        return hits
            if not chunk or len(rows) < chunk:
                return hits
            before = rows[-1][0]

    def _planned(self, sql: str, args: list[Any]) -> list[Any]:
        """`sql`'s rows: PostgreSQL's plan for BUDGET_MS, then the trigram index's."""
        import psycopg

        if BUDGET_MS > 0:  # none: the index's plan at once (the tests' way to take it)
            try:
                with self.conn.transaction():
                    self.conn.execute(f"SET LOCAL statement_timeout = {BUDGET_MS}")
                    return list(self.sql.execute(sql, args).fetchall())
            except psycopg.errors.QueryCanceled:
                pass
        return list(
            self.sql.execute(
                sql.replace("ORDER BY r.id DESC", "ORDER BY r.id + 0 DESC"), args
            ).fetchall()
        )


def _like(text: str) -> str:
    """`text` taken literally by LIKE (backslash, PostgreSQL's default escape)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
