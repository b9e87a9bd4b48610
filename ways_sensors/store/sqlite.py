"""The embedded store: one SQLite database, written by every session's dispatcher.

On disk: `<folder>/sessions.db` with SQLite's `-wal` and `-shm` beside it. The folder
is made 0700 (every missing parent too) and the database file 0600 before SQLite opens
it; SQLite gives its WAL and shared-memory files the database's mode, so all three
hold only what the owner may read.

Crash safety: WAL with synchronous=NORMAL. A batch is one transaction; it is accepted
only after COMMIT, and the rule's cursor moves only then (delivery.py), so a SIGKILL
before the commit leaves nothing of the batch and the batch comes again; one after it
leaves the rows, and the batch that comes again is ignored row by row (the UNIQUE key
of schema.py). A power cut may lose the last commits of the WAL, as an unsynced file
append would.

Concurrency: each dispatcher (one process per session, one thread per rule) has its
own connection; a write transaction starts with BEGIN IMMEDIATE and waits for another
writer's at most until the attempt's deadline (SQLite's busy timeout), then the attempt
is retried (Busy). Readers never wait for writers (WAL).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..roots import makedirs_private
from . import schema, sessionrow

TEXT = schema.COLUMNS.index("text")
SESSION = schema.COLUMNS.index("session_id")


# The file's version. 5: the writer indexes each new row itself (schema.INSERT_FTS); a
# file of 4 differs only by the insert trigger that did it, dropped by the first process
# that opens it to write (a reader reads either). A process of an older ways refuses 5.
FILE_VERSION = 5
UPGRADES = {"4": "DROP TRIGGER IF EXISTS records_ai;"}
READABLE = frozenset({str(FILE_VERSION), *UPGRADES})


class StoreError(Exception):
    """The store cannot be used as it is: another schema version, not a database."""


class Busy(Exception):
    """Another writer held the database until the deadline."""


def connect(path: str, timeout: float = 5.0, create: bool = True) -> sqlite3.Connection:
    """An open store (made when `create` and missing, schema included).
    FileNotFoundError when it is missing and not to be made; StoreError when the file is
    not a store of this version."""
    if create:
        folder = os.path.dirname(path)
        if folder:
            makedirs_private(folder)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
    elif not os.path.exists(path):
        raise FileNotFoundError(path)
    conn = sqlite3.connect(path, timeout=max(timeout, 0.001), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        _ensure_schema(conn, create)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            raise Busy from None
        raise StoreError(f"not a session store ({type(exc).__name__})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_schema(conn: sqlite3.Connection, create: bool) -> None:
    version = _version(conn)
    if version is None and create:
        conn.executescript(
            "BEGIN IMMEDIATE;"
            + schema.DDL
            + f"INSERT OR IGNORE INTO meta VALUES ('schema', '{FILE_VERSION}');COMMIT;"
        )
        version = _version(conn)
    elif version in UPGRADES and create:
        conn.executescript(
            f"BEGIN IMMEDIATE;{UPGRADES[version]}"
            f"UPDATE meta SET value = '{FILE_VERSION}' WHERE key = 'schema';COMMIT;"
        )
        version = _version(conn)
    if version != str(FILE_VERSION) and (create or version not in READABLE):
        raise StoreError(f"a session store of schema {version}, not {FILE_VERSION}")


def _version(conn: sqlite3.Connection) -> str | None:
    try:
        got = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return str(got[0]) if got else None


Prepared = tuple[str, tuple[Any, ...]]  # a statement of schema's and its values


def prepare(record: dict[str, Any], line: str) -> Prepared:
    """What stores one delivered record (its JSON `line`): a checkpoint's row or a
    record's, built apart from the transaction (an import builds them in its workers)."""
    if record.get("section") == "checkpoint":
        return schema.INSERT_CHECKPOINT, checkpoint_row(record, line)
    return schema.INSERT, schema.row(record, line)


def write(
    conn: sqlite3.Connection, records: Iterable[tuple[dict[str, Any], str]], timeout: float
) -> int:
    """Store (record, its JSON) pairs in one transaction; how many rows were new. Busy
    when another writer held the database for `timeout` seconds."""
    return write_prepared(conn, [prepare(record, line) for record, line in records], timeout)


def write_prepared(conn: sqlite3.Connection, rows: Iterable[Prepared], timeout: float) -> int:
    """write() of rows prepare() made."""
    conn.execute(f"PRAGMA busy_timeout = {max(int(timeout * 1000), 1)}")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise Busy from None
        raise
    new = 0
    shares: dict[str, list[tuple[Any, ...]]] = {}  # the new records' shares, by session
    try:
        for statement, r in rows:
            cur = conn.execute(statement, r)
            if statement == schema.INSERT and cur.rowcount == 1:
                conn.execute(schema.INSERT_FTS, (cur.lastrowid, r[TEXT]))
                shares.setdefault(r[SESSION], []).append(schema.session_values(r))
                new += 1
        sessionrow.write(conn, shares)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return new


def checkpoint_row(record: dict[str, Any], line: str) -> tuple[Any, ...]:
    last = record.get("last_rule_seq")
    note = str(record.get("checkpoint") or "").split("\n")
    size = int(note[1]) if len(note) > 1 and note[1].isdecimal() else -1  # the signed size
    return (
        str(record.get("sensor") or ""),
        str(record.get("rule") or ""),
        str(record.get("session_id") or ""),
        last if isinstance(last, int) else -1,
        size,
        str(record.get("timestamp") or ""),
        line,
    )


PRUNE_MAX = 256  # sessions removed per call: a writer's transaction stays short


def prune(conn: sqlite3.Connection, before: str, timeout: float) -> int:
    """Remove the sessions whose last record is older than `before` (an ISO UTC
    timestamp), at most PRUNE_MAX; how many went."""
    conn.execute(f"PRAGMA busy_timeout = {max(int(timeout * 1000), 1)}")
    conn.execute("BEGIN IMMEDIATE")
    try:
        sids = [
            sid
            for (sid,) in conn.execute(
                "SELECT session_id FROM sessions WHERE last_ts < ? ORDER BY last_ts LIMIT ?",
                (before, PRUNE_MAX),
            )
        ]
        for sid in sids:
            for table in ("records", "checkpoints", "sessions"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(sids)
