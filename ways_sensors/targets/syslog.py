"""The `syslog` target: each record as one RFC 5424 message, over TCP, TLS or UDP.

    <PRI>1 TIMESTAMP HOSTNAME ways PROCID MSGID [ways@32473 ...] MSG

PRI is the rule's `facility` (default `local0`) times 8 plus the severity: the rule's
`severity`, or with `auto` (the default) the record's own (formats/severity.py: `err`
for an error section, `warning` for a denied permission or a session end made up for a
vanished client, `notice` for a failed tool call, `info` otherwise). TIMESTAMP is the
record's timestamp; HOSTNAME this machine's name; APP-NAME `ways`; PROCID the
delivering process; MSGID the section (`tool_call`, `session_start`, ...). One
STRUCTURED-DATA element carries the record's identity:

    [ways@32473 session_id="..." agent="claude-code" sensor="audit" rule="all"
                rule_seq="3" seq="3" chain_hash="<64 hex>" user="jdoe"
                user_email="..." install_id="<32 hex>" host_id="<machine id>"]

(`chain_hash` when the rule chains; `seq` absent on blocking rules' records; `user`,
`user_email`, `install_id` and `host_id` from the record's identity, each where known). The SD-ID
is `ways@32473`: 32473 is the Private Enterprise Number IANA reserves for examples (RFC
5612), since ways has none of its own; receivers match on the whole SD-ID, which will
not change. Parameter values escape `"`, `\\` and `]` with a backslash (RFC 5424 6.3.3).
MSG is the record in the rule's `format` (`json`, the default; `ocsf`; `ecs`), one line
of UTF-8 JSON without a BOM (MSG-ANY: a BOM breaks most JSON parsers downstream).

Transport:

    tcp   RFC 6587 octet counting: `<length> <message>`, no delimiter inside a record
          ever matters. Port 514 unless `port` says otherwise.
    tls   the same framing inside TLS (RFC 5425), port 6514 by default. The server's
          certificate is verified against `ca_file` (default: the system's CAs) for
          `server_name` (default: `host`); `cert_file` and `key_file` give a client
          certificate for receivers that ask for one.
    relp  RELP (relp.py): each message acknowledged by the receiver (rsyslog's imrelp),
          the batch delivered only once all were; port 2514 by default. relp-tls: the
          same inside TLS, with tls's files.
    udp   one message per datagram (RFC 5426), port 514. A lost datagram cannot be seen:
          UDP is fire-and-forget whatever `delivery:` says; use tcp or tls for
          at_least_once. A message too large for a datagram is permanent.

Delivery: one connection per attempt (a batch), closed when the attempt ends, so
nothing lingers between attempts and `close` has nothing to do. After the batch is
written the connection is half-closed and the target waits, within the deadline, for
the receiver to close its side: a receiver closes only after reading every byte it was
sent, so acceptance means the receiver has read the whole batch (for TLS: its
close_notify, or the connection's end). A receiver that dies before reading it resets
the connection: retryable, and at_least_once sends the batch again (a record may then
arrive twice, with the same rule_seq and chain hash). What a receiver does after
reading (its own queues, its disk) is its business: rsyslog's queue settings decide
whether it keeps messages across its own crash.

Failures: a refused or reset connection, a timeout, DNS and TLS errors are retryable; a
`ca_file` or client certificate that cannot be read, and a message too large for UDP,
are permanent.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from msgspec import Meta, Struct

from ..utf8 import ERRORS
from .base import ERROR, TIMEOUT, Context, Item, Outcome, accepted, permanent, retryable

if TYPE_CHECKING:
    import socket
    import ssl

Facility = Literal[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
    "authpriv", "ftp", "ntp", "audit", "alert", "clock",
    "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
]  # fmt: skip
Severity = Literal["auto", "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]


class SyslogTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Send each record as an RFC 5424 message over tcp (octet counting), tls or udp."""

    host: Annotated[str, Meta(min_length=1)]
    port: Annotated[int, Meta(ge=1, le=65535)] | None = None
    protocol: Literal["tcp", "udp", "tls", "relp", "relp-tls"] = "tcp"
    facility: Facility = "local0"
    severity: Annotated[
        Severity,
        Meta(description="auto: from the record (an error above a failed tool call "
             "above an ordinary record); else this severity for every record"),
    ] = "auto"  # fmt: skip
    format: Annotated[
        Literal["json", "ocsf", "ecs"],
        Meta(description="MSG: the record (json), an OCSF event or an ECS document"),
    ] = "json"
    ca_file: str | None = None
    server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def __post_init__(self) -> None:
        tls_only = (self.ca_file, self.server_name, self.cert_file, self.key_file)
        if self.protocol not in ("tls", "relp-tls") and any(v is not None for v in tls_only):
            raise ValueError(
                "ca_file, server_name, cert_file and key_file need protocol: tls or relp-tls"
            )
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")


Spec = SyslogTarget
SECRET_FIELDS: tuple[str, ...] = ()
BATCH_DEFAULT = (256, 0.0)  # a backlog goes in one connection; a lone record at once

FACILITIES: Final = {
    name: code
    for code, name in enumerate(
        ["kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
         "authpriv", "ftp", "ntp", "audit", "alert", "clock",
         "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]
    )
}  # fmt: skip
SEVERITIES: Final = {
    "emerg": 0, "alert": 1, "crit": 2, "err": 3, "warning": 4, "notice": 5, "info": 6,
    "debug": 7,
}  # fmt: skip
DEFAULT_PORTS: Final = {"tcp": 514, "udp": 514, "tls": 6514, "relp": 2514, "relp-tls": 2514}
SD_ID: Final = "ways@32473"
APP_NAME: Final = "ways"
UDP_MAX: Final = 65507  # the largest UDP payload over IPv4
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})\Z")
_PRINTUSASCII = re.compile(r"[^!-~]")


def port_of(spec: SyslogTarget) -> int:
    return spec.port or DEFAULT_PORTS[spec.protocol]


def _field(value: str, limit: int) -> str:
    """A header field: printable US-ASCII only (RFC 5424 6.2), at most `limit` long."""
    value = _PRINTUSASCII.sub("_", value)[:limit]
    return value or "-"


def _sd_value(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def structured_data(record: dict[str, Any]) -> str:
    """The record's identity as one SD-ELEMENT (the module docstring lists it)."""
    params = [
        ("session_id", record.get("session_id")),
        ("agent", record.get("agent") or "claude-code"),
        ("sensor", record.get("sensor")),
        ("rule", record.get("rule")),
        ("rule_seq", record.get("rule_seq")),
        ("seq", record.get("seq")),
    ]
    chain = record.get("chain")
    if isinstance(chain, dict) and chain.get("hash"):
        params.append(("chain_hash", chain["hash"]))
    who = record.get("identity")
    if isinstance(who, dict):  # fleet/identity.py
        user, host = who.get("user"), who.get("host")
        user = user if isinstance(user, dict) else {}
        host = host if isinstance(host, dict) else {}
        params += [
            ("user", user.get("id")),
            ("user_email", user.get("email")),
            ("install_id", who.get("install_id")),
            ("host_id", host.get("id")),
        ]
    inner = " ".join(f'{k}="{_sd_value(v)}"' for k, v in params if v is not None)
    return f"[{SD_ID} {inner}]"


def severity_of(spec: SyslogTarget, record: dict[str, Any]) -> int:
    if spec.severity != "auto":
        return SEVERITIES[spec.severity]
    from ..formats.severity import SYSLOG, level

    return SYSLOG[level(record)]


def _hostname() -> str:
    from ..formats.ocsf import hostname

    return _field(hostname(), 255)


def message(spec: SyslogTarget, item: Item) -> bytes:
    """One record as one RFC 5424 message (no framing)."""
    record = item.record
    pri = FACILITIES[spec.facility] * 8 + severity_of(spec, record)
    stamp = str(record.get("timestamp") or "")
    if not _TIMESTAMP.match(stamp):
        stamp = "-"
    msgid = _field(str(record.get("section") or ""), 32)
    head = (
        f"<{pri}>1 {stamp} {_hostname()} {APP_NAME} {os.getpid()} {msgid} "
        f"{structured_data(record)} "
    )
    body = item.line
    if spec.format != "json":
        from .. import formats

        body = formats.encode(spec.format, record, item.line)
    return head.encode("utf-8", ERRORS) + body


def frame(msg: bytes) -> bytes:
    """RFC 6587 octet counting."""
    return b"%d " % len(msg) + msg


def _errno_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def _tls_context(spec: SyslogTarget) -> ssl.SSLContext:
    import ssl

    home = os.path.expanduser
    ctx = ssl.create_default_context(cafile=home(spec.ca_file) if spec.ca_file else None)
    if spec.cert_file and spec.key_file:
        ctx.load_cert_chain(home(spec.cert_file), home(spec.key_file))
    return ctx


def _stream(spec: SyslogTarget, data: bytes, deadline: float) -> Outcome:
    import socket  # here, not at the top: the registry loads this module on the hook path
    import ssl

    try:
        ctx = _tls_context(spec) if spec.protocol == "tls" else None
    except (OSError, ssl.SSLError) as exc:  # a CA file or certificate that cannot be read
        return permanent(ERROR, f"TLS set-up: {type(exc).__name__}")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return retryable(TIMEOUT, "deadline passed before the connection")
    sock: socket.socket | None = None
    try:
        sock = socket.create_connection((spec.host, port_of(spec)), timeout=remaining)
        if ctx is not None:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock = ctx.wrap_socket(sock, server_hostname=spec.server_name or spec.host)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(data)
        _finish(sock, deadline)
    except TimeoutError:
        return retryable(TIMEOUT, "cut at the rule timeout")
    except ssl.SSLError as exc:
        return retryable(ERROR, f"TLS: {exc.reason or type(exc).__name__}")
    except OSError as exc:
        return retryable(ERROR, _errno_name(exc))
    finally:
        if sock is not None:
            sock.close()
    return accepted()


def _finish(sock: socket.socket, deadline: float) -> None:
    """Half-close, then wait for the receiver to close: it has read everything."""
    import socket
    import ssl

    sock.settimeout(max(0.001, deadline - time.monotonic()))
    if isinstance(sock, ssl.SSLSocket):
        try:
            sock.unwrap()  # our close_notify, then the receiver's
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            pass  # it closed the connection after reading: done
        except OSError as exc:
            if exc.errno not in (0, None):
                raise
        return
    sock.shutdown(socket.SHUT_WR)
    while sock.recv(4096):
        if time.monotonic() >= deadline:
            raise TimeoutError


def _datagrams(spec: SyslogTarget, msgs: list[bytes], deadline: float) -> Outcome:
    import socket

    if any(len(m) > UDP_MAX for m in msgs):
        return permanent(ERROR, "a record is too large for one UDP datagram")
    try:
        infos = socket.getaddrinfo(spec.host, port_of(spec), type=socket.SOCK_DGRAM)
        family, kind, proto, _, addr = infos[0]
        with socket.socket(family, kind, proto) as sock:
            sock.connect(addr)
            for m in msgs:
                if time.monotonic() >= deadline:
                    return retryable(TIMEOUT, "cut at the rule timeout")
                sock.send(m)
    except OSError as exc:  # an ICMP port unreachable shows as ECONNREFUSED on send
        return retryable(ERROR, _errno_name(exc))
    return accepted()


def deliver(spec: SyslogTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    if time.monotonic() >= deadline:
        return retryable(TIMEOUT, "deadline passed before the send")
    msgs = [message(spec, item) for item in batch]
    if spec.protocol == "udp":
        return _datagrams(spec, msgs, deadline)
    if spec.protocol in ("relp", "relp-tls"):  # relp.py: each message acknowledged
        import ssl

        from . import relp

        try:
            tls = _tls_context(spec) if spec.protocol == "relp-tls" else None
        except (OSError, ssl.SSLError) as exc:
            return permanent(ERROR, f"TLS set-up: {type(exc).__name__}")
        return relp.deliver((spec.host, port_of(spec)), msgs, deadline, tls, spec.server_name)
    return _stream(spec, b"".join(frame(m) for m in msgs), deadline)


def close() -> None:
    """Nothing held between attempts: each opens and closes its socket."""


def destination(spec: SyslogTarget) -> str:
    return f"syslog {spec.protocol}://{spec.host}:{port_of(spec)}"


def off_machine(spec: SyslogTarget) -> bool:
    import ipaddress

    host = spec.host.lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True
