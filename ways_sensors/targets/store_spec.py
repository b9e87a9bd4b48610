"""`dispatch: {store: ...}`: the store target's fields (targets/store.py delivers,
targets/store_pg.py for a `url`)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from .tlsconf import Tls


class StoreTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Keep records in the session store (SQLite) for `ways sessions`; `path` names
    another database than the default one under the data root."""

    path: Annotated[
        str,
        Meta(description="the database file (absolute or ~); default: the data root's"),
    ] = ""
    url: Annotated[
        str,
        Meta(description="postgresql://user@host/db: the team store on PostgreSQL, not a file"),
    ] = ""
    password_env: Annotated[
        str, Meta(description="the environment variable holding the PostgreSQL password")
    ] = ""
    password_file: Annotated[
        str, Meta(description="a file (0600) holding the PostgreSQL password")
    ] = ""
    tls: Annotated[
        Tls | None, Meta(description="the PostgreSQL server's CA, a client certificate")
    ] = None

    def __post_init__(self) -> None:
        if self.path and not (self.path.startswith("/") or self.path.startswith("~")):
            raise ValueError("a store target's path must be absolute or start with ~")
        if self.url and self.path:
            raise ValueError("a store target has a path or a url, not both")
        if self.url and not self.url.startswith(("postgresql://", "postgres://")):
            raise ValueError("a store target's url starts with postgresql://")
        if not self.url and (self.password_env or self.password_file or self.tls):
            raise ValueError("password_env, password_file and tls are for a url's store")
        if self.tls and (self.tls.server_name or self.tls.insecure_skip_verify):
            raise ValueError("a store's tls takes ca_file, cert_file and key_file only")
