"""`tls:` of the network targets (http, otlp): the server verified, a client certificate
for servers that require one (mutual TLS).

    tls: {ca_file: /etc/pki/corp-ca.pem,         # what the server's certificate must chain
                                                 # to (default: the system's CAs)
          cert_file: ~/.config/corp/client.pem,  # the client certificate (PEM)
          key_file: ~/.config/corp/client.key,   # its key (default: inside cert_file)
          server_name: collector.corp.example}   # the name the server's certificate must
                                                 # carry, sent as SNI (default: the URL's)

The server's certificate is always verified, unless the rule says
`insecure_skip_verify: true` in so many words (lint warns about it). A context is made
once per set of files and made again when one of them changes (a renewed certificate is
used at the next attempt). A file that cannot be loaded fails the attempt as retryable:
the record waits, counted as an error, until the file is there (docs/fleet.md).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Annotated, Any

from msgspec import Meta, Struct

if TYPE_CHECKING:
    import ssl  # loaded where a context is made: every command reads this module's Tls


class Tls(Struct, forbid_unknown_fields=True, omit_defaults=True):
    ca_file: Annotated[str | None, Meta(description="CA bundle the server must chain to")] = None
    cert_file: Annotated[str | None, Meta(description="client certificate (PEM)")] = None
    key_file: Annotated[str | None, Meta(description="client key (default: in cert_file)")] = None
    server_name: Annotated[
        str | None, Meta(description="the name the server's certificate must carry (SNI)")
    ] = None
    insecure_skip_verify: Annotated[
        bool, Meta(description="true: do not verify the server (lint warns)")
    ] = False

    def __post_init__(self) -> None:
        if self.key_file and not self.cert_file:
            raise ValueError("tls: key_file needs cert_file")


class TlsFileError(OSError):
    """A file of `tls:` could not be loaded; the message names the field, never the content."""


_contexts: dict[tuple[Any, ...], ssl.SSLContext] = {}
_lock = threading.Lock()


def _stamp(path: str | None) -> tuple[str, int, int] | None:
    if not path:
        return None
    full = os.path.expanduser(path)
    try:
        st = os.stat(full)
    except OSError:
        return (full, -1, -1)
    return (full, st.st_mtime_ns, st.st_size)


def context(tls: Tls) -> ssl.SSLContext:
    """The SSL context for `tls` (cached while its files are unchanged)."""
    key = (
        _stamp(tls.ca_file),
        _stamp(tls.cert_file),
        _stamp(tls.key_file),
        tls.insecure_skip_verify,
    )
    with _lock:
        got = _contexts.get(key)
        if got is None:
            got = _contexts[key] = _make(tls)
        return got


def _make(tls: Tls) -> ssl.SSLContext:
    import ssl

    def full(p: str | None) -> str | None:
        return os.path.expanduser(p) if p else None

    try:
        ctx = ssl.create_default_context(cafile=full(tls.ca_file))
    except (OSError, ssl.SSLError) as exc:
        raise TlsFileError(f"tls: cannot load ca_file ({type(exc).__name__})") from None
    if tls.cert_file:
        try:
            ctx.load_cert_chain(full(tls.cert_file) or "", full(tls.key_file))
        except (OSError, ssl.SSLError) as exc:
            raise TlsFileError(
                f"tls: cannot load cert_file/key_file ({type(exc).__name__})"
            ) from None
    if tls.insecure_skip_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def warnings(tls: Tls | None) -> list[tuple[str, list[str | int]]]:
    """lint's word on a target's `tls` (http and otlp alike): verification turned off."""
    if tls is None or not tls.insecure_skip_verify:
        return []
    return [
        (
            "tls: insecure_skip_verify sends records to a server whose certificate is not "
            "checked: anyone in the path can read them",
            ["tls", "insecure_skip_verify"],
        )
    ]
