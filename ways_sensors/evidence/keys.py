"""Epoch keys: the machine's forward-secure Ed25519 signing keys, in `<state>/keys/`.

    keys/root.vkey           the root of trust: the root key as a C2SP verifier key
                             (`ways keys show`), written once, never changed
    keys/nodes/<node>.cert   the key tree's certificates (keytree.py), one signed note
                             per expanded node and `spine.cert`; written once each;
                             public
    keys/key-<node>.pem      the private key of each node of the key tree not yet
                             expanded or used up, PKCS#8 PEM, 0600: the current epoch's
                             leaf and the later subtrees' roots (a few per level)
    keys/keys.lock           flock'd: shared while signing, exclusive while rolling over

All through secure.py (0700 folders, 0600 files, no links followed).

The root key signs the spine certificate and is destroyed without ever touching the
disk. Rolling over to epoch e (keytree.path(e)): each node on e's path that is not
expanded yet makes its children's key files, writes its certificate (the commit
point: a node with a certificate is expanded, whatever key file is left), then is
destroyed; finally every key file whose epochs are all before e is destroyed (the
previous leaf). Destroying overwrites the file with random bytes, flushes it and
unlinks it. So whoever takes the machine during epoch e holds only e's key and keys
of later epochs: no checkpoint of an earlier epoch can be signed again. (Overwriting
cannot reach copies a copy-on-write or journalling file system, a backup or swap
kept: docs/evidence.md says so.) The current epoch is the first epoch of the key file
with the earliest epochs; every step reads one certificate per level, never the ones
before: a rollover, a start and a path cost the same at epoch 10 as at 10,000.

A key file is used only when its public key is the one its parent's certificate
lists: a swapped, truncated or unreadable key is destroyed (`evidence.key_corrupt`,
loud) and the rollover skips to the first epoch after that node's subtree, so a bad
file never signs and never stops signing for good.

Rollover: every dispatcher process rolls over before its first signature (a new key
per session run, at least), whenever the current key is older than
`ways.evidence.epoch_seconds` (config.yaml; default 3600), and as it exits
(`retire`: the key that signed its sessions is gone). `cryptography` is imported
here, never on the hook's path; its `serialization` package (a cost of every
dispatcher's start: bench/RESULTS.md) only for a key file in another PEM form than the
one written here (pem.py, which also reads and writes keys without leaving copies in memory).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..state import events
from ..state.layout import Layout
from . import keytree, pem
from .keyfolder import KeyFolder
from .note import ED25519, Note, NoteError, Signer, Verifier, parse, parse_checkpoint, parse_vkey
from .pem import DEFAULT_EPOCH_SECONDS, epoch_seconds

__all__ = ["DEFAULT_EPOCH_SECONDS", "KeyError_", "Keyring", "machine_name"]

PREFIX = "ways.sensors"


class KeyError_(Exception):
    """The key tree cannot sign: no usable key is left, or the folder is of another kind."""


def machine_name(root_public: bytes) -> str:
    """`ways.sensors/<16 hex>`: the name of a machine's keys and the prefix of its origins;
    the hex is the root public key's SHA-256, so it is unique to the key."""
    return f"{PREFIX}/{hashlib.sha256(root_public).hexdigest()[:16]}"


class Keyring(KeyFolder):
    """The key tree of one state root. Thread-safe; several processes share it by flock
    (its files and that lock: keyfolder.py)."""

    def __init__(self, layout: Layout | None = None, epoch_seconds: float | None = None):
        super().__init__(layout or Layout())
        self.epoch_seconds = epoch_seconds
        self._mutex = threading.Lock()
        self._signer: tuple[int, Signer] | None = None
        self._rolled = False  # this process rolled over once (a new key per session run)
        self._certs: dict[str, tuple[Note, list[bytes]]] = {}  # written once: cached
        self._root: Verifier | None = None

    # --- the tree ------------------------------------------------------------------------

    def root(self) -> Verifier | None:
        if self._root is None:  # written once, never changed
            text = self._read("root.vkey", 4096)
            self._root = parse_vkey(text) if text else None
        return self._root

    def certificate(self, node: str) -> tuple[Note, list[bytes]] | None:
        """A node's certificate ("spine" for the root's) and the keys it lists, as
        stored (checked against the root by `ways sensors verify`, not here)."""
        cached = self._certs.get(node)
        if cached is None:
            text = self._read(f"nodes/{node}.cert")
            if text is None:
                return None
            try:
                n = parse(text)
                cached = (n, keytree.certified_keys(parse_checkpoint(n.text), node))
            except NoteError:
                return None
            self._certs[node] = cached
        return cached

    def path_certificates(self, epoch: int) -> list[str]:
        """The certificates that prove epoch `epoch`'s key from the root, spine first."""
        out = []
        for node in ["spine", *keytree.path(epoch)[:-1]]:
            cert = self.certificate(node)
            if cert is None:
                raise KeyError_(f"the key certificate of {node} is missing")
            out.append(str(cert[0]))
        return out

    def new_certificates(self, since: int, epoch: int) -> list[str]:
        """The certificates of epoch `epoch`'s path a consumer that holds epoch `since`'s
        path (-1: none) lacks: after the first, mostly none (a sibling leaf) or one."""
        have = set(self.path_certificates(since)) if since >= 0 else set()
        return [c for c in self.path_certificates(epoch) if c not in have]

    def chain_text(self) -> str:
        """Every certificate as stored, each followed by a blank line: the form
        `--checkpoints` takes (`ways keys chain`)."""
        try:
            names = sorted(os.listdir(self._path("nodes")))
        except FileNotFoundError:
            return ""
        notes = [self._read(f"nodes/{n}") for n in names if n.endswith(".cert")]
        return "".join(t + "\n" for t in notes if t)

    def public_of(self, node: str) -> bytes | None:
        """The public key a node's parent certified for it."""
        parent, index = ("spine", int(node[1:])) if "-" not in node else (node[:-1], int(node[-1]))
        if parent.endswith("-"):
            parent = parent[:-1]
        cert = self.certificate(parent)
        return cert[1][index] if cert is not None else None

    def epoch(self) -> int:
        """The current epoch: the first epoch of the key file with the earliest epochs."""
        nodes = self._files()
        return min(keytree.span(n)[0] for n in nodes) if nodes else -1

    def ensure(self) -> Verifier:
        """The root key, made (with the spine, epoch 0's key among it) when the state
        root has none."""
        root = self.root()
        if root is not None:
            return root
        with self._locked(True):
            root = self.root()
            if root is None:
                if os.path.exists(self._path("certs")):
                    raise KeyError_("keys/ holds a linear key chain of an older version")
                for stale in self.key_files():  # a kill before root.vkey was written
                    self.destroy(stale)
                key = Ed25519PrivateKey.generate()  # never written: it signs once
                public = key.public_key().public_bytes_raw()
                name = machine_name(public)
                spine = [self._new_key(f"s{h}") for h in range(keytree.SPINE)]
                publics = [k.public_key().public_bytes_raw() for k in spine]
                text = keytree.certificate_text(name, "spine", publics)
                sig = Signer(key).sign(text, keytree.signer_name(name))
                self._write_cert("spine", Note(text, [sig]))
                root = Verifier(name, ED25519, public)
                self._write_new("root.vkey", (root.vkey + "\n").encode())
                events.log("evidence.root_key_created", key_id=root.id.hex())
        return root

    def _checked(self, node: str) -> Signer | None:
        """A node's key when its file holds the key its parent certified; else the file
        is destroyed, loudly, and None."""
        want = self.public_of(node)
        try:
            signer = self._load(node)
            why = "" if signer.public == want else "not the certified key"
        except (KeyError_, ValueError, UnicodeError, OSError) as exc:
            why = type(exc).__name__
        if not why:
            return signer
        events.log("evidence.key_corrupt", node=node, error=why or "unreadable")
        try:
            self.destroy(f"key-{node}.pem")
        except OSError:
            pass
        return None

    def _expand(self, node: str) -> bool:
        """Make a node's children, certify them, destroy the node; False when its key
        is unusable (destroyed: the caller skips its subtree)."""
        root = self.root()
        assert root is not None
        signer = self._checked(node)
        if signer is None:
            return False
        kids = [self._new_key(child) for child in keytree.children(node)]
        publics = [k.public_key().public_bytes_raw() for k in kids]
        text = keytree.certificate_text(root.name, node, publics)
        self._write_cert(node, Note(text, [signer.sign(text, keytree.signer_name(root.name))]))
        self.destroy(f"key-{node}.pem")
        return True

    def _reach(self, epoch: int) -> str | None:
        """Expand the tree down to epoch `epoch`'s leaf; the node whose subtree must be
        skipped when a key on the way is unusable (None: the leaf is ready)."""
        for node in keytree.path(epoch)[:-1]:
            if self.certificate(node) is not None:  # expanded (a kill may leave its file)
                if os.path.exists(self._path(f"key-{node}.pem")):
                    self.destroy(f"key-{node}.pem")
                continue
            if not os.path.exists(self._path(f"key-{node}.pem")) or not self._expand(node):
                return node
        leaf = keytree.path(epoch)[-1]
        return None if self._checked(leaf) is not None else leaf

    def rollover(self, to: int | None = None) -> int:
        """Start a new epoch (the next one, or `to` when later: the benchmarks and tests
        reach 10,000 epochs so): reach its leaf, then destroy every key of an earlier
        epoch. Returns the new epoch."""
        self.ensure()
        with self._locked(True):
            target = max(self.epoch() + 1, to or 0)
            while True:
                if target >= keytree.first(keytree.SPINE):
                    raise KeyError_("the key tree has no epoch left")
                skip = self._reach(target)
                if skip is None:
                    break
                target = keytree.span(skip)[1]
            for node in self._files():
                if keytree.span(node)[1] <= target:
                    self.destroy(f"key-{node}.pem")
            leaf = keytree.path(target)[-1]
            os.utime(self._path(f"key-{leaf}.pem"))  # the epoch's age starts now
            self._signer = None
            events.log("evidence.rollover", epoch=target)
            return target

    def retire(self) -> None:
        """A dispatcher's exit: roll over, so the key that signed its sessions is gone."""
        if self._rolled:
            with self._mutex:
                self.rollover()

    def forget_destroyed(self) -> None:
        """Drop the key held for signing once its file is gone: another process rolled
        over (a second session's dispatcher starting) and destroyed it, and an
        idle dispatcher must not keep in memory what the disk no longer holds (the
        dispatcher asks once a second: crew.stir)."""
        held = self._signer
        if held is None or os.path.exists(self._path(f"key-{self._leaf(held[0])}.pem")):
            return
        with self._mutex:
            if self._signer is held:
                self._signer = None

    def _max_age(self) -> float:
        if self.epoch_seconds is None:  # config.yaml's, read once per process
            self.epoch_seconds = epoch_seconds()
        return self.epoch_seconds

    def _leaf(self, epoch: int) -> str:
        return keytree.path(epoch)[-1]

    def signer(self) -> tuple[int, Signer]:
        """The current epoch and its key, rolling over first when this process has not
        yet (a new key per dispatcher run) or the key is older than the epoch limit."""
        with self._mutex:
            if not self._rolled:
                self._rolled = True
                self.rollover()
            epoch = self.epoch()
            try:
                age = time.time() - os.stat(self._path(f"key-{self._leaf(epoch)}.pem")).st_mtime
            except (FileNotFoundError, ValueError):
                age = float("inf")  # no leaf: roll over to one
            if age > self._max_age():
                epoch = self.rollover()
            if self._signer is None or self._signer[0] != epoch:
                self._signer = None  # the retired key is not kept while the new one loads
                signer = self._checked(self._leaf(epoch))
                if signer is None:
                    epoch = self.rollover()
                    signer = self._load(self._leaf(epoch))
                self._signer = (epoch, signer)
            return self._signer

    def sign(self, text: str, name: str) -> tuple[int, Note]:
        """Sign `text` under key name `name` with the current epoch's key, under the
        shared lock (a rollover never destroys the key while it signs)."""
        epoch, signer = self.signer()
        with self._locked(False):
            now = self.epoch()
            if now != epoch:  # another process rolled over meanwhile
                with self._mutex:
                    self._signer = None
                    self._signer = (now, self._load(self._leaf(now)))
                epoch, signer = self._signer
            return epoch, Note(text, [signer.sign(text, name)])

    def _load(self, node: str) -> Signer:
        try:
            return Signer(pem.load(self._path(f"key-{node}.pem"), self.layout.root))
        except FileNotFoundError:
            raise KeyError_(f"the private key of {node} is missing") from None
        except pem.NotEd25519:
            raise KeyError_(f"the key of {node} is not an Ed25519 key") from None

    def _new_key(self, node: str) -> Ed25519PrivateKey:
        key, body = pem.generate()
        self._write_new(f"key-{node}.pem", body)
        pem.wipe(body)
        return key
