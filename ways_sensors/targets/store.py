"""The `store` target: delivered records into the session store (store/), to be read
back with `ways sessions`.

`store: {}` writes the default database under the data root
(`${XDG_DATA_HOME:-~/.local/share}/agent-ways/store/sessions.db`); `path` names
another (absolute or `~`). The records are the rule's, as every other consumer gets
them: projected and masked before they arrive, never here. A batch is one
transaction; a record delivered again (at-least-once after a crash) is stored once
(store/sqlite.py says how, and what survives a SIGKILL).

`url: postgresql://user@host/db` writes the team store on PostgreSQL instead
(store/postgres.py: psycopg, the `postgres` extra, imported only then): the password
from `password_env` (a variable's name), `password_file` (0600) or libpq's own
PGPASSWORD and ~/.pgpass, never the URL; a server off this machine over verified TLS
(`tls: {ca_file, cert_file, key_file}` for a private CA and a client certificate).
Its failures: the server unreachable or refusing the credentials, a statement past the
deadline, are retryable (the records wait until it is fixed); a URL refused (a password
in it, TLS not verified off this machine), a database of another schema, are permanent.

Failures: another writer holding the database until the deadline is a retryable
timeout; a path that is a folder, runs through a file or is refused by permissions, and
a file that is not a store of this schema, are permanent; anything else (a full disk,
an I/O error) is retryable.

Retention: `ways.retention.store_kept` (config.yaml; a duration such as `90d`, at least
1h; unset keeps everything) removes the sessions whose last record is older, checked at
a process's first delivery to a database and at most hourly after; each removal is
logged (`store.pruned`, with the count).
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import ERROR, TIMEOUT, Context, Item, Outcome, accepted, permanent, retryable
from .store_spec import StoreTarget

if TYPE_CHECKING:
    from .base import Advice

SECRET_FIELDS: tuple[str, ...] = ()
BATCH_DEFAULT = (512, 0.0)  # one transaction for a backlog, no wait when records come alone
FORMAT_FIELD: str | None = None  # no choice: the records are kept as they are
FORMATS = {"json": "json"}


Spec = StoreTarget

PERMANENT_ERRNOS = frozenset(
    {errno.EISDIR, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENAMETOOLONG}
)

_local = threading.local()  # this thread's connections, by database path


def database(spec: StoreTarget) -> str:
    if spec.path:
        return os.path.expanduser(spec.path)
    from ..store import default_path

    return default_path()


def _connection(path: str, timeout: float) -> Any:
    conns: dict[str, Any] = _local.__dict__.setdefault("conns", {})
    conn = conns.get(path)
    if conn is None:
        from ..store import sqlite

        conn = conns[path] = sqlite.connect(path, timeout)
    return conn


def deliver(spec: StoreTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    if spec.url:
        from .store_pg import deliver as to_postgres

        return to_postgres(spec, batch, deadline)
    import sqlite3

    from ..store import sqlite as store

    left = deadline - time.monotonic()
    if left <= 0:
        return retryable(TIMEOUT, "deadline passed before the write")
    path = database(spec)
    try:
        conn = _connection(path, left)
        store.write(conn, [(i.record, i.line.decode("utf-8", "replace")) for i in batch], left)
    except store.Busy:
        return retryable(TIMEOUT, "the store stayed locked by another writer")
    except store.StoreError:
        _drop(path)
        return permanent(ERROR, "StoreError")
    except OSError as exc:
        _drop(path)
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        if exc.errno in PERMANENT_ERRNOS:
            return permanent(ERROR, name)
        return retryable(ERROR, name)
    except sqlite3.Error as exc:  # a full disk, an I/O error: SQLite's own words stay out
        _drop(path)
        if "locked" in str(exc) or "busy" in str(exc):
            return retryable(TIMEOUT, "the store stayed locked by another writer")
        return retryable(ERROR, type(exc).__name__)
    return accepted()


def _drop(path: str) -> None:
    conn = _local.__dict__.get("conns", {}).pop(path, None)
    if conn is not None:
        conn.close()


def close() -> None:
    """Close this thread's connections; the next attempt opens them again."""
    for path in list(_local.__dict__.get("conns", {})):
        _drop(path)
    from . import store_pg  # its own connections (psycopg is not imported by this)

    store_pg.close()


def destination(spec: StoreTarget) -> str:
    if spec.url:
        return f"store {spec.url}"
    return f"store {spec.path or database(spec)}"


def off_machine(spec: StoreTarget) -> bool:
    if not spec.url:
        return False
    from urllib.parse import urlsplit

    from .store_pg import loopback

    try:
        host = urlsplit(spec.url).hostname or ""
    except ValueError:
        return True
    return not loopback(host)


def warnings(spec: StoreTarget, at_least_once: bool) -> list[Advice]:
    return []


def unreachable(spec: StoreTarget, timeout: float) -> str | None:
    """The database's folder, or the nearest one that exists on the way to it, must be
    one this process can write in; a team store must answer."""
    if spec.url:
        from .store_pg import unreachable as postgres_unreachable

        return postgres_unreachable(spec, timeout)
    folder = os.path.dirname(database(spec))
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"{folder} is not a folder, so {database(spec)} cannot be made"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable here, so {database(spec)} cannot be made"
    return None
