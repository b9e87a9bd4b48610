"""The machine log: one witnessable log per install, whose entries are the signed
checkpoints of every session tree delivered here, and the key certificates that prove
their keys from the root.

Each session tree has its own origin and each dispatcher run its own epoch key, while a
stock witness (the C2SP witness network, litewitness) is configured with one origin and
one key per log. So every checkpoint a rule's worker delivered (sealer.py) is also
appended here: an RFC 6962 tree of origin `ways.sensors/<16 hex>/machine`, signed by
one Ed25519 key that never changes (`keys/machine-log.pem`; `ways keys show` prints its
verifier key), stored as C2SP tlog-tiles (tiles.py) any static file server can serve.
A verifier holding the log's checkpoint knows every session tree checkpointed up to it,
so a session whose file was deleted whole is named (`ways sensors verify --machine-log`).

    <state>/machine-log/             the log's prefix: `checkpoint` and `tile/`
    <state>/machine-log.json         {"size", "signed", "signed_at", "witness": {url: size},
                                     "resting": {url: wall time}, "certs": [digests]}
    <state>/machine-log.lock         flock'd by a writer for one append or checkpoint

An entry is one checkpoint note exactly as its record's `checkpoint` field holds it, or
one key certificate (keytree.py) as its `keys` list does, before the checkpoints that
need it. The worker appends its batch's checkpoints once the batch is settled
(worker.py), off the hook's path: a few small files under the lock. Settled includes a
batch parked for good (dead letters): its checkpoint is then in the log and not at the
consumer, and `verify --machine-log` says so (`absent`), as it should. A dispatcher
killed between an append and its cursor's commit sends the batch again, and the entry
is appended again: a repeat, never a gap. The tiles are written first, then
machine-log.json names the new size (the commit point): a SIGKILL leaves the tiles of
a size never committed, written again by the next append. The log is checkpointed at
most every `ways.evidence.machine_log_seconds` (cadence.py, default 60) while sessions
deliver, and as each dispatcher leaves with entries not yet signed (`close`); the
witnesses whose `log:` is `machine` (or `all`) are asked then, under the witness
deadline (witness.py); one that failed is left alone for witness.BACKOFF seconds by
every process (its old size kept, as sealer.py does). A witness's 409 on this log is
the same alarm as a session tree's: counted `witness_conflicts`, logged
`evidence.witness_conflict` (`log: machine`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..state import events, secure
from ..state.counters import Tally
from ..state.layout import Layout
from . import cadence, pem, tiles, witness
from .keyrings import keyring
from .keys import machine_name
from .note import Note, Signer, checkpoint

KEY_FILE = "machine-log.pem"
CERTS_KEPT = 256  # digests of the key certificates logged or seen last (`_fresh`)
SUFFIX = "/machine"


def prefix(layout: Layout) -> str:
    return layout.root + "/machine-log"


def _state_path(layout: Layout) -> str:
    return layout.root + "/machine-log.json"


def origin(layout: Layout) -> str:
    return machine_name(keyring(layout).ensure().public) + SUFFIX


def signer(layout: Layout) -> Signer:
    """The log's key, made once (under the keys' folder, 0600)."""
    folder = layout.keys_dir()
    secure.ensure_private_dir(folder, layout.root)
    path = f"{folder}/{KEY_FILE}"
    try:
        return Signer(pem.load(path, layout.root))
    except FileNotFoundError:
        pass
    key, body = pem.generate()
    try:
        fd = secure.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, layout.root)
    except FileExistsError:  # another process made it meanwhile
        pem.wipe(body)
        return Signer(pem.load(path, layout.root))
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
        pem.wipe(body)
    events.log("evidence.machine_log_key_created")
    return Signer(key)


def vkey(layout: Layout) -> str:
    """The log's verifier key (C2SP form), to configure a witness and verify with."""
    return signer(layout).verifier(origin(layout)).vkey


@contextmanager
def _locked(layout: Layout) -> Iterator[None]:
    secure.ensure_private_dir(layout.root, layout.root)
    fd = secure.open_private(layout.root + "/machine-log.lock", os.O_RDWR | os.O_CREAT, layout.root)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_state(layout: Layout) -> dict[str, Any]:
    try:
        fd = secure.open_private(_state_path(layout), os.O_RDONLY, layout.root)
    except FileNotFoundError:
        return {"size": 0, "signed": 0, "signed_at": 0.0, "witness": {}}
    with os.fdopen(fd, "rb") as f:
        st = json.loads(f.read(1 << 20))
    st.setdefault("witness", {})
    return dict(st)


def _commit(layout: Layout, st: dict[str, Any]) -> None:
    secure.replace_private(_state_path(layout), json.dumps(st).encode(), layout.root)


_touched: dict[str, tuple[Layout, Tally | None]] = {}  # the logs this process appended to


def settled(layout: Layout, records: Sequence[dict[str, Any]], tally: Tally) -> None:
    """A rule's batch is done with (worker.py): its checkpoints, and the key
    certificates they carry, become entries. Never raises: a log that cannot be written
    is counted and logged, the batch goes on."""
    cps = [
        r
        for r in records
        if r.get("section") == "checkpoint" and isinstance(r.get("checkpoint"), str)
    ]
    if not cps:
        return
    certs = [k for r in cps for k in r.get("keys") or () if isinstance(k, str)]
    _touched[layout.root] = (layout, tally)
    try:
        add(layout, [r["checkpoint"] for r in cps], tally, certs)
    except Exception as exc:
        tally.count("machine_log_errors")
        events.log("evidence.machine_log_failed", error=type(exc).__name__)


def close_all() -> None:
    """A dispatcher's exit: each log it appended to is signed up to its end."""
    for layout, tally in _touched.values():
        try:
            close(layout, tally)
        except Exception as exc:
            events.log("evidence.machine_log_failed", error=type(exc).__name__)


def add(
    layout: Layout, notes: Sequence[str], tally: Tally | None = None, certs: Sequence[str] = ()
) -> None:
    """Append checkpoint notes as entries, after the key certificates among `certs` the
    log has not taken lately (`_fresh`); sign the log when its checkpoint is due."""
    wanted = [n.encode() for n in notes]
    entries = [e for e in wanted if len(e) <= tiles.MAX_ENTRY]
    if len(entries) < len(wanted):
        events.log("evidence.machine_log_entry_too_large", dropped=len(wanted) - len(entries))
    if not entries:
        return
    with _locked(layout):
        st = read_state(layout)
        old = int(st["size"])
        entries = _fresh(st, certs) + entries
        st["size"] = tiles.append(prefix(layout), layout.root, old, entries)
        _commit(layout, st)
        if old != int(st.get("signed", 0)):  # no checkpoint names the size it replaced
            tiles.drop(prefix(layout), old, st["size"])
        tiles.prune(prefix(layout), st["size"])
        if time.time() - float(st.get("signed_at", 0)) >= cadence.configured().machine_log:
            _sign(layout, st, tally)


def _fresh(st: dict[str, Any], certs: Sequence[str]) -> list[bytes]:
    """The certificates of `certs` not among the CERTS_KEPT the log took or saw last
    (their digests in the state, most recent last): each tree's first checkpoint
    carries its epoch's whole path, the spine and top nodes every time, so they are
    kept as they recur, while the set stays bounded; a certificate seen again only
    after it fell out is logged again, which costs an entry, never a proof."""
    recent: list[str] = [d for d in st.get("certs") or [] if isinstance(d, str)]
    out = []
    for c in dict.fromkeys(certs):
        data = c.encode()
        digest = hashlib.sha256(data).hexdigest()[:16]
        if digest in recent:
            recent.remove(digest)
        elif len(data) <= tiles.MAX_ENTRY:
            out.append(data)
        recent.append(digest)
    st["certs"] = recent[-CERTS_KEPT:]
    return out


def close(layout: Layout, tally: Tally | None = None) -> None:
    """As a dispatcher leaves: sign the entries not yet signed."""
    if not os.path.exists(_state_path(layout)):
        return
    with _locked(layout):
        st = read_state(layout)
        if int(st["size"]) > int(st.get("signed", 0)):
            _sign(layout, st, tally)


def _sign(layout: Layout, st: dict[str, Any], tally: Tally | None) -> None:
    size = int(st["size"])
    log = tiles.Tiles(prefix(layout), size)
    name = origin(layout)
    cp = checkpoint(name, size, log.root())
    note = Note(cp.text, [signer(layout).sign(cp.text, name)])
    _witness(log, note, st, tally)
    secure.replace_private(prefix(layout) + "/checkpoint", str(note).encode(), layout.root)
    st.update(signed=size, signed_at=time.time())
    _commit(layout, st)
    if tally is not None:
        tally.flush()  # an alarm is counted before the dispatcher may leave


def witnesses() -> list[witness.Witness]:
    ws, _ = witness.configured()
    return [w for w in ws if w.log in ("machine", "all")]


def _witness(log: tiles.Tiles, note: Note, st: dict[str, Any], tally: Tally | None) -> None:
    sizes: dict[str, int] = st["witness"]
    resting: dict[str, float] = st.setdefault("resting", {})  # url -> asked again after
    deadline = time.monotonic() + witness.TIMEOUT
    size = log.size
    for w in witnesses():
        if float(resting.get(w.url, 0)) > time.time():
            continue  # it failed lately: the next dispatcher's exit need not wait on it
        resting.pop(w.url, None)
        old = int(sizes.get(w.url, 0))
        old = old if old <= size else 0
        answer = witness.add_checkpoint(
            w, old, log.consistency_proof(old, size), note, deadline=deadline
        )
        if answer.status == "conflict":
            theirs = answer.size
            if theirs is not None and 0 < theirs <= size and theirs != old:
                proof = log.consistency_proof(theirs, size)
                answer = witness.add_checkpoint(w, theirs, proof, note, deadline=deadline)
            resolved = answer.status == "cosigned"
            if tally is not None:
                tally.count("witness_resyncs" if resolved else "witness_conflicts")
            events.log(
                "evidence.witness_conflict",
                log="machine",
                witness=w.name,
                sent_old=old,
                witness_size=theirs,
                size=size,
                resolved=resolved,
            )
        if answer.status == "cosigned":
            note.signatures.extend(answer.cosignatures)
            sizes[w.url] = size
            if tally is not None:
                tally.count("witness_cosigned")
        elif answer.status == "error":
            resting[w.url] = time.time() + witness.BACKOFF
            if tally is not None:
                tally.count("witness_errors")
            events.log(
                "evidence.witness_error", log="machine", witness=w.name, detail=answer.detail
            )
