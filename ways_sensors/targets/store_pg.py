"""The `store` target's team store: a batch into PostgreSQL (store/postgres.py), one
connection per thread and URL, opened at the first delivery and again after a failure.

psycopg is imported here only when a rule's `store:` has a `url` (the `postgres` extra);
without it the delivery fails as permanent, naming the extra.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import ERROR, TIMEOUT, Item, Outcome, accepted, permanent, retryable

if TYPE_CHECKING:
    from .store_spec import StoreTarget

_local = threading.local()  # this thread's connections, by URL
# SQLSTATE classes a retry cannot fix: authorization (28), syntax or access (42)
PERMANENT_CLASSES = ("28", "42")


def loopback(host: str) -> bool:
    from ..store.postgres import _loopback

    return _loopback(host)


def _params(spec: StoreTarget) -> dict[str, Any]:
    from ..store import postgres

    tls = None
    if spec.tls is not None:
        tls = {k: getattr(spec.tls, k) or "" for k in ("ca_file", "cert_file", "key_file")}
    return postgres.params(spec.url, spec.password_env, spec.password_file, tls)


def _connection(spec: StoreTarget, timeout: float) -> Any:
    conns: dict[str, Any] = _local.__dict__.setdefault("conns", {})
    conn = conns.get(spec.url)
    if conn is None or conn.closed:
        from ..store import postgres

        conn = conns[spec.url] = postgres.connect(_params(spec), timeout)
    return conn


def deliver(spec: StoreTarget, batch: Sequence[Item], deadline: float) -> Outcome:
    from ..store import postgres

    try:
        import psycopg
    except ImportError:
        return permanent(ERROR, "psycopg missing: pip install 'ways-sensors[postgres]'")
    left = deadline - time.monotonic()
    if left <= 0:
        return retryable(TIMEOUT, "deadline passed before the write")
    try:
        conn = _connection(spec, left)
        items = [(i.record, i.line.decode("utf-8", "replace")) for i in batch]
        postgres.write(conn, items, max(deadline - time.monotonic(), 0.001))
    except postgres.StoreError as exc:
        _drop(spec.url)
        return permanent(ERROR, str(exc))
    except psycopg.errors.QueryCanceled:
        _drop(spec.url)
        return retryable(TIMEOUT, "the team store did not answer before the deadline")
    except psycopg.Error as exc:  # the server's words may quote a record: only its code
        _drop(spec.url)
        state = getattr(exc, "sqlstate", None) or ""
        name = f"{type(exc).__name__} {state}".strip()
        if state[:2] in PERMANENT_CLASSES:
            return permanent(ERROR, name)
        return retryable(ERROR, name)
    return accepted()


def _drop(url: str) -> None:
    conn = _local.__dict__.get("conns", {}).pop(url, None)
    if conn is not None:
        conn.close()


def close() -> None:
    for url in list(_local.__dict__.get("conns", {})):
        _drop(url)


def unreachable(spec: StoreTarget, timeout: float) -> str | None:
    """The server answers, with these credentials, and holds (or may make) the store."""
    from ..store import postgres

    try:
        import psycopg
    except ImportError:
        return (
            "a postgresql:// store needs the postgres extra: pip install 'ways-sensors[postgres]'"
        )
    try:
        postgres.connect(_params(spec), timeout, create=False).close()
    except FileNotFoundError:
        return None  # reached: the first delivery makes the tables
    except postgres.StoreError as exc:
        return str(exc)
    except psycopg.Error as exc:
        return "the team store cannot be reached: " + " ".join(str(exc).split())[:300]
    return None
