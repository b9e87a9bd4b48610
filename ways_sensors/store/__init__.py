"""The session store: delivered records kept in SQLite (or a team's PostgreSQL) to be
read back (issue 38).

    store/schema.py      the tables, and what one record becomes as a row
    store/sqlite.py      the embedded store: open (WAL, 0600 in 0700), write, prune
    store/query.py       what `ways sessions` reads: sessions, a timeline, a search
    store/candidates.py  which trigrams a search asks the index for
    store/proof.py       a stored record's inclusion proof
    store/postgres.py    the team store on PostgreSQL: connect, tables, write
    store/pgquery.py     what `ways sessions --store postgresql://...` reads

Written only by the `store` target (targets/store.py), so only records that passed
the rule's projection and masking reach it; read by `ways sessions` and the services
behind it (services/sessions.py). The default database is under the data root,
`${XDG_DATA_HOME:-~/.local/share}/agent-ways/store/sessions.db`: the state root is
for what the dispatchers need to go on, removed as sessions end; the store is what
the user keeps.
"""

from __future__ import annotations

from .. import roots

DB_NAME = "sessions.db"


def data_root() -> str:
    """XDG's data home for this app (relative values are ignored, as XDG says)."""
    base = roots.env("XDG_DATA_HOME")
    if not base or not base.startswith("/"):
        base = roots.home() + "/.local/share"
    return base.rstrip("/") + "/" + roots.APP


def default_path() -> str:
    return data_root() + "/store/" + DB_NAME
