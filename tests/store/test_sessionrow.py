"""A batch's session row folded in Python (store/sessionrow.py) is the row the store's
UPSERT_SESSION leaves, record by record, in SQLite itself."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors.store import schema, sessionrow

maybe = st.none() | st.sampled_from(["a", "b", "ü", "z"])
shares = st.tuples(
    st.just("s1"),
    st.sampled_from(["claude-code", "codex"]),
    maybe,  # project
    st.sampled_from(["2026-12-01T10:00:00Z", "2026-12-01T09:00:00Z", "2026-12-02T00:00:00Z"]),
    st.integers(0, 1),  # a prompt
    st.integers(0, 1),  # a tool call
    maybe,  # model
    st.none() | st.floats(min_value=0, max_value=5, allow_nan=False),  # cost
    maybe,  # outcome
    maybe,  # first prompt
    st.integers(0, 1),  # imported
    maybe,  # user
).map(lambda t: (*t[:4], t[3], *t[4:]))  # first_ts and last_ts: the record's time


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(schema.DDL)
    return conn


def _rows(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute(sessionrow.SELECT, ("s1",)).fetchall()


@settings(max_examples=300, deadline=None)
@given(st.lists(shares, max_size=3), st.lists(shares, min_size=1, max_size=6))
def test_a_folded_batch_leaves_the_row_the_upserts_leave(before, batch):
    one_by_one, folded = _db(), _db()
    for conn in (one_by_one, folded):
        for values in before:  # an earlier batch, record by record
            conn.execute(schema.UPSERT_SESSION, values)
    for values in batch:
        one_by_one.execute(schema.UPSERT_SESSION, values)
    sessionrow.write(folded, {"s1": list(batch)})
    assert _rows(folded) == _rows(one_by_one)
