"""Epoch keys: the machine's forward-secure Ed25519 signing keys, in `<state>/keys/`.

    keys/root.vkey          the root of trust: epoch 0's public key as a C2SP verifier
                            key (`ways keys show`), written once, never changed
    keys/certs              the key log's checkpoints (below), signed notes each
                            followed by a blank line, appended; public
    keys/epoch-<n>.pem      the current epoch's private key, PKCS#8 PEM, 0600; exactly
                            one exists between operations
    keys/keys.lock          flock'd: shared while signing, exclusive while rolling over

All four through secure.py (0700 folder, 0600 files, no links followed).

The key log is an RFC 6962 tree whose leaf n is epoch n's 32-byte public key. Rolling
over from epoch n to n+1: the new key is written, then epoch n's key signs the key
log's checkpoint at size n+2 (origin `<name>/keys`, one extension line
`next <verifier key of epoch n+1>`), the outgoing epoch's last signature; once that
certificate is on disk the old private key is overwritten and unlinked. A verifier
holding the root key walks the certificates in order: each must verify under the key
before it, and its root must be the tree of the keys so far. So whoever takes the
machine during epoch n holds only key n: no checkpoint of an earlier epoch can be
signed again. (Overwriting cannot reach copies a copy-on-write or journalling file
system, a backup or swap kept: docs/evidence.md says so.)

A SIGKILL at any point leaves a state `Keyring` repairs under the lock: the current
epoch is the number of certificates; a key file of any other epoch is destroyed (an
older one was certified away, a newer one was never certified).

Rollover: every dispatcher process rolls over before its first signature (a new key per
session run, at least), and whenever the current key is older than
`ways.evidence.epoch_seconds` (config.yaml; default 3600). `cryptography` is imported
here, never on the hook's path; its `serialization` package (a cost at every
dispatcher's start, with the RSA, DSA, DH, EC and SSH modules it loads:
bench/RESULTS.md, 2026-12-03 13:20) only for a key file in another PEM form than the one
written here (`_pem`, `_pkcs8_seed`).
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..state import events, secure
from ..state.layout import Layout
from . import merkle
from .note import ED25519, Note, NoteError, Signer, Verifier, checkpoint, parse, parse_vkey
from .note import verify as verify_note

PREFIX = "ways.sensors"
DEFAULT_EPOCH_SECONDS = 3600.0
_PEM = re.compile(r"epoch-([0-9]{1,9})\.pem")
_MAX_CERTS_FILE = 64 << 20


class KeyError_(Exception):
    """The key chain cannot sign: its current private key is gone or unreadable."""


def machine_name(root_public: bytes) -> str:
    """`ways.sensors/<16 hex>`: the name of a machine's keys and the prefix of its origins;
    the hex is the root public key's SHA-256, so it is unique to the key."""
    return f"{PREFIX}/{hashlib.sha256(root_public).hexdigest()[:16]}"


def certificate_text(name: str, publics: list[bytes]) -> str:
    """The key log's checkpoint naming the last of `publics` (epoch len-1) as next."""
    nxt = Verifier(name, ED25519, publics[-1])
    cp = checkpoint(f"{name}/keys", len(publics), merkle.root_of(publics), [f"next {nxt.vkey}"])
    return cp.text


def walk(root: Verifier, certs: list[Note]) -> list[bytes]:
    """The public keys of epochs 0..n that a chain of certificates proves from `root`
    (in any order; duplicates allowed); stops at the first gap. A certificate that
    does not verify raises NoteError."""
    from .note import parse_checkpoint

    name = machine_name(root.public)
    by_size: dict[int, Note] = {}
    for n in certs:
        cp = parse_checkpoint(n.text)
        if cp.origin == f"{name}/keys":
            by_size.setdefault(cp.size, n)
    publics = [root.public]
    while len(publics) + 1 in by_size:
        n = by_size[len(publics) + 1]
        cp = parse_checkpoint(n.text)
        signer = Verifier(f"{name}/keys", ED25519, publics[-1])
        verify_note(n, [signer])
        if len(cp.extensions) != 1 or not cp.extensions[0].startswith("next "):
            raise NoteError(f"the key certificate at size {cp.size} names no next key")
        nxt = parse_vkey(cp.extensions[0][5:])
        if merkle.root_of([*publics, nxt.public]) != cp.root:
            raise NoteError(f"the key certificate at size {cp.size} is not the key log's tree")
        publics.append(nxt.public)
    return publics


class Keyring:
    """The key chain of one state root. Thread-safe; several processes share it by flock."""

    def __init__(self, layout: Layout | None = None, epoch_seconds: float | None = None):
        self.layout = layout or Layout()
        self.dir = self.layout.keys_dir()
        self.epoch_seconds = epoch_seconds
        self._mutex = threading.Lock()
        self._signer: tuple[int, Signer] | None = None
        self._rolled = False  # this process rolled over once (a new key per session run)
        self._certs: tuple[tuple[int, int, int], list[Note]] | None = None  # by stat
        self._root: Verifier | None = None
        self._lock_fd: int | None = None
        self._fd_mutex = threading.Lock()
        self._flock_mutex = threading.RLock()  # rollover() inside signer() nests nothing

    # --- files ---------------------------------------------------------------------------

    def _path(self, name: str) -> str:
        return f"{self.dir}/{name}"

    def _read(self, name: str, cap: int = _MAX_CERTS_FILE) -> str | None:
        try:
            fd = secure.open_private(self._path(name), os.O_RDONLY, self.layout.root)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read(cap).decode("utf-8")

    def _write_new(self, name: str, data: bytes) -> None:
        fd = secure.open_private(
            self._path(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, self.layout.root
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def _append(self, name: str, data: bytes) -> None:
        fd = secure.open_private(
            self._path(name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, self.layout.root
        )
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def key_files(self) -> list[str]:
        """Every private key file in the folder (for `destroy` and for tests)."""
        try:
            return sorted(n for n in os.listdir(self.dir) if _PEM.fullmatch(n))
        except FileNotFoundError:
            return []

    def destroy(self, name: str) -> None:
        """Overwrite a private key file with random bytes, flush it, then unlink it."""
        path = self._path(name)
        try:
            fd = secure.open_private(path, os.O_WRONLY, self.layout.root)
        except FileNotFoundError:
            return
        try:
            size = os.fstat(fd).st_size
            os.write(fd, os.urandom(max(size, 1)))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.unlink(path)
        events.log("evidence.key_destroyed", file=name)

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """The keys' flock. The descriptor is opened (and the folder checked) once per
        Keyring: a checkpoint per batch must not pay for the path checks each time."""
        with self._fd_mutex:
            if self._lock_fd is None:
                secure.ensure_private_dir(self.dir, self.layout.root)
                self._lock_fd = secure.open_private(
                    self._path("keys.lock"), os.O_RDWR | os.O_CREAT, self.layout.root
                )
            fd = self._lock_fd
        # flock is per open file description: one Keyring's threads share it, so they
        # take it one at a time (the mutex), shared or exclusive against other processes
        with self._flock_mutex:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    # --- the chain -----------------------------------------------------------------------

    def root(self) -> Verifier | None:
        if self._root is None:  # written once, never changed
            text = self._read("root.vkey", 4096)
            self._root = parse_vkey(text) if text else None
        return self._root

    def certificates(self) -> list[Note]:
        """The certificates, parsed again only when the file changed (it only grows)."""
        from .note import split_notes

        try:
            st = os.stat(self._path("certs"))
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            return []
        cached = self._certs
        if cached is not None and cached[0] == stamp:
            return cached[1]
        text = self._read("certs") or ""
        certs = [parse(n) for n in split_notes(text)]
        self._certs = (stamp, certs)
        return certs

    def chain_text(self) -> str:
        """The certificates as stored: the form `--checkpoints` and consumers take."""
        return self._read("certs") or ""

    def epoch(self) -> int:
        return len(self.certificates())

    def ensure(self) -> Verifier:
        """The root key, made (epoch 0) when the state root has none."""
        root = self.root()
        if root is not None:
            return root
        with self._locked(True):
            root = self.root()
            if root is None:
                key = Ed25519PrivateKey.generate()
                for stale in self.key_files():  # a kill before root.vkey was written
                    self.destroy(stale)
                self._write_new("epoch-0.pem", _pem(key))
                public = key.public_key().public_bytes_raw()
                root = Verifier(machine_name(public), ED25519, public)
                self._write_new("root.vkey", (root.vkey + "\n").encode())
                events.log("evidence.root_key_created", key_id=root.id.hex())
        return root

    def _repair(self, epoch: int) -> None:
        """Under the exclusive lock: destroy every key file but the current epoch's."""
        for name in self.key_files():
            if name != f"epoch-{epoch}.pem":
                self.destroy(name)

    def _load(self, epoch: int) -> Signer:
        text = self._read(f"epoch-{epoch}.pem", 64 << 10)
        if text is None:
            raise KeyError_(f"the private key of epoch {epoch} is missing")
        seed = _pkcs8_seed(text)
        if seed is not None:
            key: object = Ed25519PrivateKey.from_private_bytes(seed)
        else:  # another PEM form of a key (not one this module wrote)
            from cryptography.hazmat.primitives import serialization

            key = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise KeyError_(f"the key of epoch {epoch} is not an Ed25519 key")
        return Signer(key)

    def rollover(self) -> int:
        """Start a new epoch: certify a new key with the current one, then destroy the
        current one. Returns the new epoch."""
        root = self.ensure()
        with self._locked(True):
            certs = self.certificates()
            epoch = len(certs)
            self._repair(epoch)
            old = self._load(epoch)
            publics = walk(root, certs)
            if len(publics) != epoch + 1:
                raise KeyError_("the key certificates do not chain from the root key")
            new = Ed25519PrivateKey.generate()
            self._write_new(f"epoch-{epoch + 1}.pem", _pem(new))
            publics.append(new.public_key().public_bytes_raw())
            text = certificate_text(root.name, publics)
            sig = old.sign(text, f"{root.name}/keys")
            self._append("certs", (str(Note(text, [sig])) + "\n").encode())
            self.destroy(f"epoch-{epoch}.pem")
            self._signer = None
            events.log("evidence.rollover", epoch=epoch + 1)
            return epoch + 1

    def _max_age(self) -> float:
        if self.epoch_seconds is None:  # config.yaml's, read once per process
            self.epoch_seconds = epoch_seconds()
        return self.epoch_seconds

    def signer(self) -> tuple[int, Signer]:
        """The current epoch and its key, rolling over first when this process has not
        yet (a new key per dispatcher run) or the key is older than the epoch limit."""
        with self._mutex:
            if not self._rolled:
                self._rolled = True
                self.rollover()
            epoch = self.epoch()
            try:
                age = time.time() - os.stat(self._path(f"epoch-{epoch}.pem")).st_mtime
            except FileNotFoundError:
                age = 0.0
            if age > self._max_age():
                epoch = self.rollover()
            if self._signer is None or self._signer[0] != epoch:
                self._signer = (epoch, self._load(epoch))
            return self._signer

    def sign(self, text: str, name: str) -> tuple[int, Note]:
        """Sign `text` under key name `name` with the current epoch's key, under the
        shared lock (a rollover never destroys the key while it signs)."""
        epoch, signer = self.signer()
        with self._locked(False):
            now = self.epoch()
            if now != epoch:  # another process rolled over meanwhile
                with self._mutex:
                    self._signer = (now, self._load(now))
                epoch, signer = self._signer
            return epoch, Note(text, [signer.sign(text, name)])


# An Ed25519 key's PKCS#8 (RFC 8410) DER is this prefix and the 32-byte seed: its PEM is
# what cryptography writes for it (serialization.PrivateFormat.PKCS8, no encryption)
PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
PEM_HEAD, PEM_TAIL = "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----\n"


def _pem(key: Ed25519PrivateKey) -> bytes:
    body = base64.b64encode(PKCS8_ED25519 + key.private_bytes_raw()).decode()
    return (PEM_HEAD + body + PEM_TAIL).encode()


def _pkcs8_seed(text: str) -> bytes | None:
    """The seed of a key file exactly as `_pem` writes it; None for any other text."""
    if not (text.startswith(PEM_HEAD) and text.endswith(PEM_TAIL)):
        return None
    try:
        der = base64.b64decode(text[len(PEM_HEAD) : -len(PEM_TAIL)], validate=True)
    except ValueError:
        return None
    if len(der) != len(PKCS8_ED25519) + 32 or not der.startswith(PKCS8_ED25519):
        return None
    return der[len(PKCS8_ED25519) :]


def epoch_seconds() -> float:
    """`ways.evidence.epoch_seconds` from config.yaml (a positive number), else 3600."""
    from ..config.layers import read_config

    try:
        config, _ = read_config()
    except Exception:
        return DEFAULT_EPOCH_SECONDS
    node = config.get("ways") if isinstance(config, dict) else None
    node = node.get("evidence") if isinstance(node, dict) else None
    value = node.get("epoch_seconds") if isinstance(node, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_EPOCH_SECONDS
