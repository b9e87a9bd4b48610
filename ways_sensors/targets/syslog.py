"""The `syslog` target: each record as one RFC 5424 message, over TCP, TLS or UDP.

The message (PRI, header, the STRUCTURED-DATA element, MSG in the rule's `format`) is
syslog_message.py's; this module moves it.

Transport:

    tcp   RFC 6587 octet counting: `<length> <message>`, no delimiter inside a record
          ever matters. Port 514 unless `port` says otherwise.
    tls   the same framing inside TLS (RFC 5425), port 6514 by default. The server's
          certificate is verified against `ca_file` (default: the system's CAs) for
          `server_name` (default: `host`); `cert_file` and `key_file` give a client
          certificate for receivers that ask for one.
    relp  RELP (relp.py): each message acknowledged by the receiver (rsyslog's imrelp),
          the batch delivered only once all were; port 2514 by default. relp-tls: the
          same inside TLS, with tls's files. `relay_flush: N`: through rsyslog relays,
          N flush messages after each batch, so a relay's acknowledgement covers the
          next hop's (relp.py says why; N = the relay's windowSize per relay hop).
    udp   one message per datagram (RFC 5426), port 514. A lost datagram cannot be seen:
          UDP is fire-and-forget whatever `delivery:` says; use tcp or tls for
          at_least_once. A message too large for a datagram is permanent. A batch
          sent is `unconfirmed` (base.unconfirmed), never accepted as delivered: the
          counters count it as unconfirmed, `ways sensors fire` says so and exits
          NOT_CONFIRMED (10).

Delivery: one connection per attempt (a batch), closed when the attempt ends, so
nothing lingers between attempts and `close` has nothing to do. After the batch is
written the connection is half-closed and the target waits, within the deadline, for
the receiver to close its side: a receiver closes only after reading every byte it was
sent, so acceptance means the receiver has read the whole batch (for TLS: its
close_notify, and only that: a receiver that refused our client certificate answers
our data with an alert or a dropped connection, and is retried). A receiver that
keeps the connection open after reading is taken at its TCP's word: once its kernel
has acknowledged every byte (Linux's SIOCOUTQ) and CLOSE_GRACE passed without a
close, the batch is accepted (detail `acknowledged, not closed`), never sent again and
again; one that does not read (its buffers fill) is still cut at the deadline. A
receiver that dies before reading it resets the connection: retryable, and
at_least_once sends the batch again (a record may then arrive twice, with the same
rule_seq and chain hash). What a receiver does after reading (its own queues, its
disk) is its business: rsyslog's queue settings decide whether it keeps messages
across its own crash.

Failures: a refused or reset connection, a timeout, DNS and TLS errors are retryable; a
`ca_file` or client certificate that cannot be read, and a message too large for UDP,
are permanent.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from msgspec import Meta, Struct

from .base import (
    ERROR,
    TIMEOUT,
    Context,
    Item,
    Outcome,
    accepted,
    permanent,
    refused_connection,
    retryable,
    unconfirmed,
)
from .syslog_message import (
    FACILITIES,
    SEVERITIES,
    Facility,
    Severity,
    frame,
    record_severity,
    rfc5424,
)

if TYPE_CHECKING:
    import socket
    import ssl

    from .base import Advice


class SyslogTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Send each record as an RFC 5424 message over tcp (octet counting), tls or udp."""

    host: Annotated[str, Meta(min_length=1)]
    port: Annotated[int, Meta(ge=1, le=65535)] | None = None
    protocol: Literal["tcp", "udp", "tls", "relp", "relp-tls"] = "tcp"
    facility: Facility = "local0"
    severity: Annotated[
        Severity,
        Meta(
            description="auto: from the record (an error above a failed tool call "
            "above an ordinary record); else this severity for every record"
        ),
    ] = "auto"
    format: Annotated[
        Literal["json", "ocsf", "ecs"],
        Meta(description="MSG: the record (json), an OCSF event or an ECS document"),
    ] = "json"
    ca_file: str | None = None
    server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    relay_flush: Annotated[
        int,
        Meta(
            ge=0,
            le=4096,
            description="relp: flush messages sent after each batch, so that through "
            "rsyslog relays a batch counts as delivered only once the hop after the last "
            "relay has it: each relay's omrelp windowSize, summed over the relays",
        ),
    ] = 0

    def __post_init__(self) -> None:
        tls_only = (self.ca_file, self.server_name, self.cert_file, self.key_file)
        if self.protocol not in ("tls", "relp-tls") and any(v is not None for v in tls_only):
            raise ValueError(
                "ca_file, server_name, cert_file and key_file need protocol: tls or relp-tls"
            )
        if self.relay_flush and self.protocol not in ("relp", "relp-tls"):
            raise ValueError("relay_flush needs protocol: relp or relp-tls")
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")


Spec = SyslogTarget
SECRET_FIELDS: tuple[str, ...] = ()
BATCH_DEFAULT = (256, 0.0)  # a backlog goes in one connection; a lone record at once
FORMAT_FIELD = "format"
FORMATS = {"json": "json", "ocsf": "ocsf", "ecs": "ecs"}  # MSG: the format each value sends

DEFAULT_PORTS: Final = {"tcp": 514, "udp": 514, "tls": 6514, "relp": 2514, "relp-tls": 2514}
UDP_MAX: Final = 65507  # the largest UDP payload over IPv4
UDP_SENT: Final = "sent over UDP: no acknowledgement, cannot be confirmed"
CLOSE_GRACE: Final = 1.0  # seconds a receiver that acknowledged everything has to close


def port_of(spec: SyslogTarget) -> int:
    return spec.port or DEFAULT_PORTS[spec.protocol]


def severity_of(spec: SyslogTarget, record: dict[str, Any]) -> int:
    """The rule's `severity`, or with `auto` the record's own (formats/severity.py)."""
    if spec.severity != "auto":
        return SEVERITIES[spec.severity]
    return record_severity(record)


def message(spec: SyslogTarget, item: Item) -> bytes:
    """One record as one RFC 5424 message (no framing), as the rule spells it."""
    pri = FACILITIES[spec.facility] * 8 + severity_of(spec, item.record)
    return rfc5424(pri, spec.format, item)


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
            name = spec.server_name or spec.host
            sock = ctx.wrap_socket(sock, server_hostname=name, suppress_ragged_eofs=False)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(data)
        if not _finish(sock, deadline):
            return accepted("acknowledged, not closed")
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


def _finish(sock: socket.socket, deadline: float) -> bool:
    """Half-close, then wait for the receiver to close: it has read everything (True).
    A receiver that keeps the connection open is taken at its TCP's word once every
    byte is acknowledged and CLOSE_GRACE has passed without a close (False): else such
    a receiver got the same batch at every attempt, and the rule never moved on."""
    import socket
    import ssl

    if isinstance(sock, ssl.SSLSocket):
        return _finish_tls(sock, deadline)
    sock.shutdown(socket.SHUT_WR)
    while True:
        now = time.monotonic()
        sock.settimeout(max(0.001, min(deadline, now + CLOSE_GRACE) - now))
        try:
            while sock.recv(4096):
                if time.monotonic() >= deadline:
                    raise TimeoutError
            return True
        except TimeoutError:
            if _unacknowledged(sock) == 0:
                return False
            if time.monotonic() >= deadline:
                raise


def _finish_tls(sock: ssl.SSLSocket, deadline: float) -> bool:
    """TLS's half-close: our close_notify, then the receiver's. Only its close_notify
    proves it read everything: a receiver that refused our certificate (TLS 1.3 checks
    it after our side of the handshake, and our data, went out) answers with an alert,
    which Python's unwrap() takes as a completed shutdown, or drops the connection. So
    the alert is looked for before and after our close_notify, with reads, which raise
    on it; a shutdown that completed in between is not taken as proof either."""
    import ssl

    sock.setblocking(False)
    try:
        if sock.recv(1) == b"":  # an alert already here raises; b"": it closed first
            return True
        raise ssl.SSLError("the receiver sent data")
    except ssl.SSLWantReadError:
        pass  # nothing yet: the usual case
    except ssl.SSLZeroReturnError:
        return True  # its close_notify, before ours
    while True:
        try:
            sock.unwrap()  # our close_notify; theirs is read below
            raise ssl.SSLError("the receiver ended TLS before our close_notify")
        except ssl.SSLWantReadError:
            break  # sent
        except ssl.SSLWantWriteError:  # its buffers are full: wait, within the deadline
            import select

            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [sock], [], left)[1]:
                raise TimeoutError from None
    sock.settimeout(max(0.001, deadline - time.monotonic()))
    try:
        while sock.recv(4096):  # until its close_notify (a ragged EOF raises)
            if time.monotonic() >= deadline:
                raise TimeoutError
    except ssl.SSLZeroReturnError:
        pass  # its close_notify: it read everything
    except TimeoutError:
        if _unacknowledged(sock) != 0:
            raise
        return False
    return True


def _unacknowledged(sock: socket.socket) -> int | None:
    """Bytes sent that the receiver's TCP has not acknowledged (Linux's SIOCOUTQ); None
    where the system cannot say (then only a close counts)."""
    import fcntl
    import struct
    import termios

    try:
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("i", raw)[0])


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
    return unconfirmed(UDP_SENT)


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
        pri = FACILITIES[spec.facility] * 8 + SEVERITIES["debug"]
        flush = [relp.flush_message(pri)] * spec.relay_flush
        address = (spec.host, port_of(spec))
        return relp.deliver(address, msgs, deadline, tls, spec.server_name, flush)
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


def warnings(spec: SyslogTarget, at_least_once: bool) -> list[Advice]:
    if at_least_once and spec.protocol == "udp":
        return [
            (
                "delivery: at_least_once over syslog udp cannot see a lost datagram; "
                "use protocol: tcp or tls",
                ["protocol"],
            )
        ]
    return []


def unreachable(spec: SyslogTarget, timeout: float) -> str | None:
    """tcp and tls: a connection (nothing sent); udp cannot be checked without sending."""
    if spec.protocol == "udp":
        return None
    return refused_connection(spec.host, port_of(spec), timeout)
