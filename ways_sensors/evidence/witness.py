"""A C2SP tlog-witness client (c2sp.org/tlog-witness): `add-checkpoint`, and the witnesses
configured in config.yaml.

    ways:
      witness:                       # one witness, or a list of them
        url: https://witness.example/submit     # the submission prefix
        key: witness.example/w1+<hex id>+<base64>  # its cosignature/v1 verifier key
        log: sessions                  # what it witnesses: sessions (each session tree,
                                       # the default), machine (the machine log alone:
                                       # machinelog.py, a stock witness) or all

The request, POST `<url>/add-checkpoint`:

    old <size the witness last cosigned for this origin, 0 at first>\\n
    <consistency proof from that size, one base64 hash a line>\\n ...
    \\n
    <the signed checkpoint>

200: one or more cosignature lines (`— <name> <base64>`); those of the configured key
that verify (cosignature/v1 over the checkpoint text) are kept and added to the note.
409 Conflict: the witness holds another size for this origin (body: that size and a
newline, Content-Type text/x.tlog.size): someone showed it a different history, or this
machine lost what it stored. Either way an alarm: counted (`witness_conflicts`),
logged (`evidence.witness_conflict`), shown by `ways status`. When the witness's size is
one this tree has, the request is made once more from it (a consistent witness then
cosigns; a forked one refuses again). Anything else is a failure, counted
(`witness_errors`) and logged; the checkpoint goes out without that cosignature.

A checkpoint's requests to all witnesses share one deadline (TIMEOUT, or the rule's
timeout when shorter): a witness that sends its answer a byte at a time is cut off at
it (`deadline`), so no witness holds a rule's records back longer. http.client, not
httpx: its socket is there to shut down when the deadline comes. It, ssl and socket are
imported at the first request: every chained rule loads this module, and most
dispatchers have no witness to ask.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

from ..plain import Frozen, Plain
from .note import (
    COSIGNATURE_V1,
    Note,
    NoteError,
    Signature,
    b64,
    cosignature_time,
    parse_vkey,
    signature_line,
)

TIMEOUT = 5.0  # seconds for all of one checkpoint's requests; a rule's timeout caps it
MAX_RESPONSE = 64 << 10
MAX_PROOF = 63  # the spec's limit on proof lines
BACKOFF = 30.0  # seconds a failed witness is left alone (its old size is kept)


LOGS = ("sessions", "machine", "all")


class Witness(Frozen):
    FIELDS = ("url", "key", "log")
    __slots__ = FIELDS
    url: str
    key: Any  # note.Verifier of type cosignature/v1
    log: str  # one of LOGS

    def __init__(self, url: str, key: Any, log: str = "sessions") -> None:
        self._set(url, key, log)

    @property
    def name(self) -> str:
        return str(self.key.name)


class Answer(Plain):
    FIELDS = ("status", "cosignatures", "size", "detail")
    __slots__ = FIELDS
    status: str  # "cosigned" | "conflict" | "error"
    cosignatures: list[Signature]
    size: int | None  # the witness's size, on a conflict
    detail: str

    def __init__(
        self, status: str, cosignatures: list[Signature], size: int | None = None, detail: str = ""
    ) -> None:
        self.status, self.cosignatures, self.size, self.detail = status, cosignatures, size, detail


def configured(config: dict[str, Any] | None = None) -> tuple[list[Witness], list[str]]:
    """The witnesses of config.yaml's `ways.witness`, and a line per entry refused."""
    if config is None:
        from ..config import userconfig  # no YAML reader where there is no config.yaml

        config = userconfig.data()
    node = config.get("ways") if isinstance(config, dict) else None
    node = node.get("witness") if isinstance(node, dict) else None
    entries = node if isinstance(node, list) else [node] if node else []
    out: list[Witness] = []
    problems: list[str] = []
    for i, entry in enumerate(entries):
        where = f"ways.witness[{i}]" if isinstance(node, list) else "ways.witness"
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            problems.append(f"{where}: needs url: and key:")
            continue
        url = entry["url"].rstrip("/")
        if not url.startswith(("http://", "https://")):
            problems.append(f"{where}: url must be http:// or https://")
            continue
        try:
            key = parse_vkey(str(entry.get("key", "")))
        except NoteError as exc:
            problems.append(f"{where}: key: {exc}")
            continue
        if key.kind != COSIGNATURE_V1:
            problems.append(f"{where}: key must be a cosignature/v1 key (type 0x04)")
            continue
        log = entry.get("log", "sessions")
        if log not in LOGS:
            problems.append(f"{where}: log must be one of {', '.join(LOGS)}")
            continue
        out.append(Witness(url, key, log))
    return out, problems


def request_body(old: int, proof: Sequence[bytes], note: Note) -> bytes:
    if len(proof) > MAX_PROOF:
        raise ValueError("a consistency proof of more than 63 hashes")
    lines = [f"old {old}\n", *(b64(h) + "\n" for h in proof), "\n"]
    return ("".join(lines) + str(note)).encode()


def add_checkpoint(
    w: Witness,
    old: int,
    proof: Sequence[bytes],
    note: Note,
    timeout: float = TIMEOUT,
    deadline: float | None = None,
) -> Answer:
    """One add-checkpoint request, over in `timeout` seconds at most in all (or at the
    monotonic `deadline`, when sooner): a witness that answers a byte at a time is cut
    off there, not after a timeout per read. Never raises for what the network or
    witness does."""
    import http.client

    end = time.monotonic() + timeout
    end = end if deadline is None else min(end, deadline)
    try:
        status, ctype, data = _post(w.url + "/add-checkpoint", request_body(old, proof, note), end)
    except _TooLarge:
        return Answer("error", [], detail="response too large")
    except (OSError, ValueError, http.client.HTTPException) as exc:
        late = time.monotonic() >= end
        return Answer("error", [], detail="deadline" if late else type(exc).__name__)
    if status == 409:
        text = data.decode("ascii", "replace").strip()
        size = int(text) if text.isdigit() and len(text) < 20 else None
        kind = "" if ctype.startswith("text/x.tlog.size") else f" ({ctype or 'no type'})"
        return Answer("conflict", [], size=size, detail=f"HTTP 409{kind}")
    if status != 200:
        return Answer("error", [], detail=f"HTTP {status}")
    return _cosigned(w, data, note)


class _TooLarge(Exception):
    pass


def _post(url: str, body: bytes, end: float) -> tuple[int, str, bytes]:
    """POST `body`; (status, content type, body). Each socket operation is bounded by
    the time left, and a timer shuts the socket down at `end`, which ends a read in
    progress however slowly the bytes come. Redirects are not followed."""
    import http.client
    import ssl
    from urllib.parse import urlsplit

    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError("a witness URL is http:// or https://")
    left = end - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline")
    conn: http.client.HTTPConnection
    if u.scheme == "https":
        ctx = ssl.create_default_context()
        conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=left, context=ctx)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=left)
    try:
        conn.connect()
        left = end - time.monotonic()
        if left <= 0 or conn.sock is None:
            raise TimeoutError("deadline")
        timer = threading.Timer(left, _cut, (conn.sock,))
        timer.daemon = True
        timer.start()
        try:
            path = (u.path or "/") + (f"?{u.query}" if u.query else "")
            conn.request("POST", path, body=body, headers={"Content-Type": "text/plain"})
            resp = conn.getresponse()
            data = resp.read(MAX_RESPONSE + 1)
        finally:
            timer.cancel()
        if len(data) > MAX_RESPONSE:
            raise _TooLarge
        if time.monotonic() >= end:  # cut off: what was read may be short
            raise TimeoutError("deadline")
        return resp.status, resp.getheader("content-type") or "", data
    finally:
        conn.close()


def _cut(sock: socket.socket) -> None:
    import socket

    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


def _cosigned(w: Witness, data: bytes, note: Note) -> Answer:
    good: list[Signature] = []
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return Answer("error", [], detail="response not UTF-8")
    for line in lines:
        if not line:
            continue
        try:
            sig = signature_line(line)
        except NoteError:
            return Answer("error", [], detail="response holds a line that is no signature")
        if (sig.name, sig.id) != (w.key.name, w.key.id):
            continue  # another key of the witness's: ignored
        if cosignature_time(w.key, sig, note.text) is None:
            return Answer("error", [], detail="the witness's cosignature does not verify")
        good.append(sig)
    if not good:
        return Answer("error", [], detail="no cosignature from the configured key")
    return Answer("cosigned", good)
