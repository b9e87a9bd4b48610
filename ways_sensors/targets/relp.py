"""RELP, the Reliable Event Logging Protocol (rsyslog's imrelp serves it): syslog
messages each acknowledged by the receiver, so `at_least_once` counts a record delivered
only once the server said it has it.

A frame, both ways:

    TXNR SP COMMAND SP DATALEN [SP DATA] LF

TXNR counts the client's commands from 1; the server answers each with `rsp` and the
same TXNR, its DATA starting with a status (`200 OK`; anything else is a refusal). One
connection per batch:

    -> 1 open <n> relp_version=0\\nrelp_software=ways\\ncommands=syslog
    <- 1 rsp <n> 200 OK\\nrelp_version=0\\n...commands=syslog
    -> 2 syslog <n> <RFC 5424 message>          (up to WINDOW unanswered at a time)
    <- 2 rsp 6 200 OK
    ...
    -> N close 0
    <- N rsp 0

The batch is accepted when every message got its 200, and then every flush message
(`flush`, below). A connection that breaks, a
`serverclose`, a timeout or a refusal before that makes the whole batch retryable: what
the server had acknowledged is sent again (the chain's duplicates, which `ways sensors
verify` reports as duplicates), never dropped. Responses are read with a bound on every
field (RSP_MAX), so a hostile server cannot make the reader grow without end.

Through a relay, a 200 is not the next hop's: rsyslog's `omrelp` hands a message to its
send window and the relay's `imrelp` acknowledges it at once, while up to the window's
size (`windowSize`; librelp ignores 1 and keeps its default of 128) wait for the next
hop's answer in the relay's memory. A relay killed then loses them, acknowledged: the
tail of a batch, since a batch cut earlier is sent again whole. `flush` closes that
gap: after the batch, `flush` FLUSH messages (MSGID `ways-flush`, no record) go the same
way, and the batch is accepted only when they were acknowledged too. A relay with a
window of W sends the W-th of them only once the next hop acknowledged the batch's last
message, so `flush` = W per relay hop proves the batch reached the hop after the last
relay (docs/fleet.md). The central server drops them (docs/fleet/rsyslog-central.conf).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence

from .base import ERROR, REFUSED, TIMEOUT, Outcome, accepted, retryable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl

OFFER = b"relp_version=0\nrelp_software=ways\ncommands=syslog"
WINDOW = 64  # messages sent and not yet answered; librelp's own client keeps 128
RSP_MAX = 64 * 1024
TOKEN_MAX = 32
FLUSH_MSGID = "ways-flush"


def flush_message(pri: int) -> bytes:
    """A flush: an RFC 5424 message that carries no record (MSGID ways-flush)."""
    return b"<%d>1 - - ways - %s - -" % (pri, FLUSH_MSGID.encode())


class Broken(Exception):
    """The server broke the protocol or the connection: the batch is retried."""


def frame(txnr: int, command: bytes, data: bytes = b"") -> bytes:
    head = b"%d %s %d" % (txnr, command, len(data))
    return head + (b" " + data if data else b"") + b"\n"


class _Reader:
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline, self.buf = sock, deadline, bytearray()

    def _more(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Broken("the server closed the connection")
        self.buf += chunk

    def _token(self) -> tuple[bytes, int]:
        """The next token, and the byte that ended it (SP or LF)."""
        while True:
            for i, b in enumerate(self.buf[: TOKEN_MAX + 1]):
                if b in (0x20, 0x0A):
                    tok = bytes(self.buf[:i])
                    del self.buf[: i + 1]
                    return tok, b
            if len(self.buf) > TOKEN_MAX:
                raise Broken("a frame header field is too long")
            self._more()

    def frame(self) -> tuple[int, bytes, bytes]:
        txnr, _ = self._token()
        command, end = self._token()
        if end == 0x0A:
            raise Broken("a frame without DATALEN")
        size, end = self._token()
        if not (txnr.isdigit() and size.isdigit()) or int(size) > RSP_MAX:
            raise Broken("a malformed frame header")
        n = int(size)
        if n and end != 0x20:
            raise Broken("DATALEN without data")
        while len(self.buf) < n + (1 if n else 0):
            self._more()
        data = bytes(self.buf[:n])
        del self.buf[: n + (1 if n else 0)]  # DATA, then the trailing LF
        return int(txnr), command, data


def _answer(reader: _Reader, txnr: int) -> None:
    got, command, data = reader.frame()
    if command == b"serverclose":
        raise Broken("the server closed the session")
    if command != b"rsp" or got != txnr:
        raise Broken(f"expected the answer to {txnr}")
    if not data.startswith(b"200"):
        status = data[:3].decode("ascii", "replace")
        raise Refused(f"RELP {status}")


class Refused(Exception):
    pass


def deliver(
    address: tuple[str, int],
    msgs: Sequence[bytes],
    deadline: float,
    tls: ssl.SSLContext | None = None,
    server_name: str | None = None,
    flush: Sequence[bytes] = (),
) -> Outcome:
    """Send `msgs`, then the `flush` messages, over one RELP session; accepted only when
    all were acknowledged."""
    import ssl

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return retryable(TIMEOUT, "deadline passed before the connection")
    sock: socket.socket | None = None
    try:
        sock = socket.create_connection(address, timeout=remaining)
        if tls is not None:
            sock = tls.wrap_socket(sock, server_hostname=server_name or address[0])
        reader = _Reader(sock, deadline)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(frame(1, b"open", OFFER))
        _answer(reader, 1)
        sent = answered = 1
        for msg in [*msgs, *flush]:
            sent += 1
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.sendall(frame(sent, b"syslog", msg))
            if sent - answered >= WINDOW:
                answered += 1
                _answer(reader, answered)
        while answered < sent:
            answered += 1
            _answer(reader, answered)
        try:  # every message is acknowledged: a close the server fumbles changes nothing
            sock.sendall(frame(sent + 1, b"close"))
            reader.frame()
        except (OSError, Broken):
            pass
    except TimeoutError:
        return retryable(TIMEOUT, "cut at the rule timeout")
    except Refused as exc:
        return retryable(REFUSED, str(exc))
    except Broken as exc:
        return retryable(ERROR, f"RELP: {exc}")
    except ssl.SSLError as exc:
        return retryable(ERROR, f"TLS: {exc.reason or type(exc).__name__}")
    except OSError as exc:
        import errno

        return retryable(ERROR, errno.errorcode.get(exc.errno or 0, type(exc).__name__))
    finally:
        if sock is not None:
            sock.close()
    return accepted(f"{len(msgs)} acknowledged")
