"""The team store: the session store's tables on PostgreSQL, written by every member's
dispatchers and searched together (`store: {url: postgresql://...}`,
`ways sessions search --store URL`).

The driver is psycopg 3 (the `postgres` extra: `pip install 'ways-sensors[postgres]'`),
imported only when a postgresql URL is used: never on the hook's path, never by the
embedded store.

Tables, in the schema `ways` of the URL's database (made with the extension `pg_trgm`
when missing: PostgreSQL 13 and later let a database's owner make it): `records`,
`sessions`, `checkpoints` and `meta` as store/schema.py describes them, with one column
more, `records.folded`: the text in Python's lower case, indexed by a pg_trgm GIN index
(`gin_trgm_ops`), which serves the substring search (store/pgquery.py). Text columns
compare as bytes (COLLATE "C"), as SQLite's do. PostgreSQL keeps no NUL character in
text: one in a record's text, prompt or names is stored as U+FFFD (the record's JSON
escapes it and is kept whole).

Writing: a batch is one transaction (statement_timeout the attempt's deadline); a
record stored twice is stored once (the same UNIQUE key as SQLite's), so what is
accepted after COMMIT survives a dispatcher's crash, and a batch that comes again adds
nothing. Schema creation takes an advisory lock: two first writers make it once.

Connecting (connect()): the password is never in the URL (refused: it would sit in a
sensor file or the process list); it comes from `password_env`, `password_file` (0600
or stricter), or libpq's own PGPASSWORD, PGPASSFILE and ~/.pgpass. A server off this
machine is reached over TLS that verifies it (sslmode verify-full unless the URL says
verify-ca); a URL asking less of a remote server is refused. A loopback host or a
Unix socket keeps the URL's sslmode.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import schema

if TYPE_CHECKING:
    import psycopg

SCHEMA = "ways"
SCHEMES = ("postgresql://", "postgres://")
VERIFIED = ("verify-full", "verify-ca")
LOCK = 0x57A75  # pg_advisory_xact_lock's key while the schema is made

TEXT = 'TEXT COLLATE "C"'
DDL = f"""
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE IF NOT EXISTS meta (key {TEXT} PRIMARY KEY, value {TEXT} NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sensor {TEXT} NOT NULL, rule {TEXT} NOT NULL, session_id {TEXT} NOT NULL,
  rule_seq BIGINT, seq BIGINT, ts {TEXT} NOT NULL, section {TEXT} NOT NULL,
  agent {TEXT} NOT NULL, agent_id {TEXT}, agent_type {TEXT}, project {TEXT},
  user_id {TEXT}, tool {TEXT}, tool_kind {TEXT}, tool_use_id {TEXT}, model {TEXT},
  cost DOUBLE PRECISION, outcome {TEXT}, imported SMALLINT NOT NULL DEFAULT 0,
  text {TEXT} NOT NULL, record {TEXT} NOT NULL, folded {TEXT} NOT NULL,
  UNIQUE (sensor, rule, session_id, rule_seq)
);
CREATE INDEX IF NOT EXISTS records_session ON records (session_id, ts, seq);
CREATE INDEX IF NOT EXISTS records_folded ON records USING gin (folded gin_trgm_ops);
CREATE TABLE IF NOT EXISTS sessions (
  session_id {TEXT} PRIMARY KEY, agent {TEXT} NOT NULL, project {TEXT},
  first_ts {TEXT} NOT NULL, last_ts {TEXT} NOT NULL, records BIGINT NOT NULL,
  prompts BIGINT NOT NULL, tools BIGINT NOT NULL, model {TEXT}, cost DOUBLE PRECISION,
  outcome {TEXT}, first_prompt {TEXT}, imported SMALLINT NOT NULL DEFAULT 0, user_id {TEXT}
);
CREATE INDEX IF NOT EXISTS sessions_last ON sessions (last_ts);
CREATE TABLE IF NOT EXISTS checkpoints (
  sensor {TEXT} NOT NULL, rule {TEXT} NOT NULL, session_id {TEXT} NOT NULL,
  last_rule_seq BIGINT NOT NULL, size BIGINT NOT NULL, ts {TEXT}, record {TEXT} NOT NULL,
  PRIMARY KEY (sensor, rule, session_id, last_rule_seq, size)
);
"""
INSERT = (
    f"INSERT INTO records ({', '.join(schema.COLUMNS)}, folded) "
    f"VALUES ({', '.join(['%s'] * (len(schema.COLUMNS) + 1))}) "
    "ON CONFLICT DO NOTHING RETURNING id"
)
# schema.UPSERT_SESSION in PostgreSQL's words (the existing row named, LEAST for min)
UPSERT_SESSION = """
INSERT INTO sessions (session_id, agent, project, first_ts, last_ts, records, prompts,
  tools, model, cost, outcome, first_prompt, imported, user_id)
VALUES (%s, %s, %s, %s, %s, 1, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (session_id) DO UPDATE SET
  first_ts = LEAST(sessions.first_ts, excluded.first_ts),
  last_ts = GREATEST(sessions.last_ts, excluded.last_ts),
  records = sessions.records + 1,
  prompts = sessions.prompts + excluded.prompts,
  tools = sessions.tools + excluded.tools,
  model = coalesce(excluded.model, sessions.model),
  cost = CASE WHEN excluded.cost IS NULL THEN sessions.cost
    ELSE coalesce(sessions.cost, 0) + excluded.cost END,
  outcome = coalesce(excluded.outcome, sessions.outcome),
  first_prompt = CASE WHEN sessions.first_prompt IS NULL OR excluded.first_ts < sessions.first_ts
    THEN coalesce(excluded.first_prompt, sessions.first_prompt) ELSE sessions.first_prompt END,
  imported = LEAST(sessions.imported, excluded.imported),
  project = coalesce(sessions.project, excluded.project),
  user_id = coalesce(sessions.user_id, excluded.user_id)
"""
INSERT_CHECKPOINT = (
    "INSERT INTO checkpoints (sensor, rule, session_id, last_rule_seq, size, ts, record) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)


class StoreError(Exception):
    """The URL or the database cannot be used as it is; `str()` names no secret."""


def is_url(store: str | None) -> bool:
    return bool(store) and str(store).startswith(SCHEMES)


def _loopback(host: str) -> bool:
    """A Unix socket (no host, or a folder) or a loopback address: nothing leaves the
    machine, so TLS is the URL's choice."""
    import ipaddress

    for h in host.split(",") if host else [""]:
        h = h.strip()
        if not h or h.startswith("/") or h.startswith("@") or h == "localhost":
            continue
        try:
            if not ipaddress.ip_address(h.strip("[]")).is_loopback:
                return False
        except ValueError:
            return False
    return True


def params(
    url: str,
    password_env: str = "",
    password_file: str = "",
    tls: dict[str, str] | None = None,
) -> dict[str, Any]:
    """psycopg's connection parameters for `url` by the rules of the module docstring;
    StoreError for a URL they refuse or a password that cannot be read."""
    from psycopg.conninfo import conninfo_to_dict

    if not is_url(url):
        raise StoreError("a team store's URL starts with postgresql://")
    try:
        got = conninfo_to_dict(url)
    except Exception:  # psycopg's ProgrammingError: the URL does not parse (not echoed)
        raise StoreError("the store URL does not parse as a PostgreSQL URL") from None
    if got.get("password"):
        raise StoreError(
            "the store URL holds a password: give it in the environment (PGPASSWORD, or "
            "the target's password_env), a file (password_file) or ~/.pgpass"
        )
    out: dict[str, Any] = {k: v for k, v in got.items() if v is not None}
    host = str(out.get("host") or os.environ.get("PGHOST") or "")
    mode = str(out.get("sslmode") or "")
    if not _loopback(host):
        if mode and mode not in VERIFIED:
            raise StoreError(
                f"sslmode={mode} for a server off this machine: a team store is reached "
                "over TLS that verifies the server (verify-full, the default, or verify-ca)"
            )
        out["sslmode"] = mode or "verify-full"
    for key, name in (("sslrootcert", "ca_file"), ("sslcert", "cert_file"), ("sslkey", "key_file")):
        if tls and tls.get(name):
            out[key] = os.path.expanduser(tls[name])
    password = _password(password_env, password_file)
    if password is not None:
        out["password"] = password
    out["application_name"] = "ways"
    out["options"] = (str(out.get("options") or "") + f" -c search_path={SCHEMA},public").strip()
    return out


def _password(env: str, path: str) -> str | None:
    if env:
        value = os.environ.get(env)
        if not value:
            raise StoreError(f"password_env names {env}, which is not set")
        return value
    if not path:
        return None
    full = os.path.expanduser(path)
    try:
        fd = os.open(full, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise StoreError(f"password_file {path}: {exc.strerror or 'unreadable'}") from None
    with os.fdopen(fd, "rb") as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            raise StoreError(f"password_file {path} is readable by others: chmod 600 it")
        value = f.read(4096).decode("utf-8", "replace").strip("\r\n")
    if not value:
        raise StoreError(f"password_file {path} is empty")
    return value


def connect(conn_params: dict[str, Any], timeout: float = 10.0, create: bool = True) -> Any:
    """An open connection (autocommit: each batch opens its own transaction), the schema
    made when `create` and missing. StoreError: no store there and not to be made, or a
    store of another schema version."""
    import psycopg

    conn = psycopg.connect(**conn_params, connect_timeout=max(int(timeout), 2), autocommit=True)
    try:
        _ensure_schema(conn, create)
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_schema(conn: psycopg.Connection[Any], create: bool) -> None:
    version = _version(conn)
    if version is None and create:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(f"SET LOCAL search_path = {SCHEMA}, public")
            for statement in DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO meta VALUES ('schema', %s) ON CONFLICT DO NOTHING",
                (str(schema.VERSION),),
            )
        version = _version(conn)
    if version is None:
        raise FileNotFoundError("no session store in that database")
    if version != str(schema.VERSION):
        raise StoreError(f"a session store of schema {version}, not {schema.VERSION}")


def _version(conn: psycopg.Connection[Any]) -> str | None:
    exists = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()
    if not exists or exists[0] is None:
        return None
    got = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema'").fetchone()
    return str(got[0]) if got else None


def _clean(values: Sequence[Any]) -> tuple[Any, ...]:
    """PostgreSQL's text holds no NUL: each one becomes U+FFFD."""
    return tuple(v.replace("\x00", "\ufffd") if isinstance(v, str) else v for v in values)


def write(
    conn: psycopg.Connection[Any], records: Iterable[tuple[dict[str, Any], str]], timeout: float
) -> int:
    """Store (record, its JSON) pairs in one transaction; how many rows were new."""
    from .sqlite import checkpoint_row

    rows, checkpoints = [], []
    for record, line in records:
        if record.get("section") == "checkpoint":
            checkpoints.append(_clean(checkpoint_row(record, line)))
        else:
            r = _clean(schema.row(record, line))
            rows.append(r)
    new = []
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(f"SET LOCAL statement_timeout = {max(int(timeout * 1000), 1)}")
        if checkpoints:
            cur.executemany(INSERT_CHECKPOINT, checkpoints)
        if rows:
            text_at = schema.COLUMNS.index("text")
            folded = [(*r, r[text_at].lower()) for r in rows]
            cur.executemany(INSERT, folded, returning=True)
            for r in rows:
                if cur.fetchone() is not None:
                    new.append(schema.session_values(r))
                cur.nextset()
        if new:  # one after the other, as SQLite's are: the session row's sums agree
            cur.executemany(UPSERT_SESSION, new)
    return len(new)
