"""C2SP signed notes (c2sp.org/signed-note), tlog-checkpoint bodies (c2sp.org/tlog-checkpoint)
and Ed25519 cosignatures (c2sp.org/tlog-cosignature, cosignature/v1).

A signed note is a text ending in a newline, a blank line, then one or more signature
lines, each

    — <key name> base64(4-byte key ID || signature)\\n          (U+2014, a space, ...)

The text is everything before the last blank line, its final newline included; notes
are UTF-8 with no control character but the newline. A key is named by (name, key ID):

    Ed25519 signer      key ID = SHA-256(name || 0x0A || 0x01 || 32-byte public key)[:4]
                        signature = Ed25519 over the note text
    cosignature/v1      key ID = SHA-256(name || 0x0A || 0x04 || 32-byte public key)[:4]
                        signature = u64 big-endian timestamp || Ed25519 over
                        "cosignature/v1\\ntime <timestamp>\\n" || the note text

A verifier key (vkey) is `<name>+<hex key ID>+base64(type byte || public key)`.
Signatures from unknown keys are ignored; a known key whose signature fails rejects
the note (the spec's SHOULD, taken as a MUST here).

A checkpoint's text is its origin, the tree size (decimal, no leading zero), the
base64 RFC 6962 root, then optional extension lines, each line non-empty.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..plain import Frozen, Plain

ED25519 = 0x01
COSIGNATURE_V1 = 0x04
DASH = "\u2014 "
MAX_SIGNATURES = 64  # the spec asks verifiers to accept at least 16
MAX_NOTE = 1 << 20  # a note past this is refused unread (checkpoints are a few hundred bytes)
_SIZE = re.compile(r"0|[1-9][0-9]{0,19}")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")


class NoteError(ValueError):
    """A note, checkpoint or key that does not parse, or a signature that fails."""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteError(f"not base64: {text[:40]!r}") from None


def _valid_name(name: str) -> bool:
    return bool(name) and not any(c.isspace() or c == "+" for c in name)


def key_id(name: str, kind: int, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


class Verifier(Frozen):
    """A public key as a note names it: (name, key ID), its type and its 32 bytes."""

    FIELDS = ("name", "kind", "public")
    __slots__ = FIELDS
    name: str
    kind: int
    public: bytes

    def __init__(self, name: str, kind: int, public: bytes) -> None:
        self._set(name, kind, public)

    @property
    def id(self) -> bytes:
        return key_id(self.name, self.kind, self.public)

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.id.hex()}+{b64(bytes([self.kind]) + self.public)}"

    def renamed(self, name: str) -> Verifier:
        return Verifier(name, self.kind, self.public)


def parse_vkey(text: str) -> Verifier:
    """A C2SP verifier key (Ed25519 or cosignature/v1); the key ID must match the key."""
    parts = text.strip().split("+", 2)  # the base64 part may itself hold "+"
    if len(parts) != 3 or not _valid_name(parts[0]):
        raise NoteError("a verifier key is <name>+<hex key ID>+<base64 key>")
    name, hex_id, data = parts
    raw = unb64(data)
    if len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE_V1):
        raise NoteError("only Ed25519 (type 0x01) and cosignature/v1 (0x04) keys are known")
    v = Verifier(name, raw[0], raw[1:])
    if hex_id.lower() != v.id.hex() or len(hex_id) != 8:
        raise NoteError(f"the key ID {hex_id} does not match the key named {name}")
    return v


class Signature(Frozen):
    FIELDS = ("name", "id", "data")
    __slots__ = FIELDS
    name: str
    id: bytes
    data: bytes  # after the key ID

    def __init__(self, name: str, id: bytes, data: bytes) -> None:
        self._set(name, id, data)

    @property
    def line(self) -> str:
        return f"{DASH}{self.name} {b64(self.id + self.data)}\n"


class Note(Plain):
    FIELDS = ("text", "signatures")
    __slots__ = FIELDS
    text: str
    signatures: list[Signature]

    def __init__(self, text: str, signatures: list[Signature] | None = None) -> None:
        self.text = text
        self.signatures = [] if signatures is None else signatures

    def __str__(self) -> str:
        return self.text + "\n" + "".join(s.line for s in self.signatures)


def signature_line(line: str) -> Signature:
    if not line.startswith(DASH):
        raise NoteError("a signature line starts with an em dash and a space")
    name, sep, data = line[len(DASH) :].partition(" ")
    if not sep or not _valid_name(name) or " " in data:
        raise NoteError("a signature line is `— <name> <base64>`")
    raw = unb64(data)
    if len(raw) < 5:
        raise NoteError("a signature is a key ID and at least one byte")
    return Signature(name, raw[:4], raw[4:])


def parse(note: str | bytes) -> Note:
    """A signed note's text and signature lines (not verified: see `verify`)."""
    if isinstance(note, bytes):
        if len(note) > MAX_NOTE:
            raise NoteError("the note is too long")
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError:
            raise NoteError("a note is UTF-8") from None
    if len(note) > MAX_NOTE:
        raise NoteError("the note is too long")
    if _CONTROL.search(note):
        raise NoteError("a note holds no control character but the newline")
    if not note.endswith("\n"):
        raise NoteError("a note ends with a newline")
    cut = note.rfind("\n\n")
    if cut < 0:
        raise NoteError("a note's text and signatures are separated by a blank line")
    text, sigs = note[: cut + 1], note[cut + 2 :]
    lines = sigs.split("\n")[:-1]
    if not lines:
        raise NoteError("a note has at least one signature")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note with more than {MAX_SIGNATURES} signatures")
    return Note(text, [signature_line(line) for line in lines])


def verify(note: Note, verifiers: Iterable[Verifier]) -> list[Verifier]:
    """The known keys whose signatures verify (in the note's order). A known key's bad
    signature raises NoteError; a note no known key signed raises NoteError."""
    known = {(v.name, v.id): v for v in verifiers}
    good: list[Verifier] = []
    for sig in note.signatures:
        v = known.get((sig.name, sig.id))
        if v is None:
            continue  # an unknown key: ignored, as the spec says
        if not _check(v, sig, note.text):
            raise NoteError(f"the signature of {v.name} ({v.id.hex()}) does not verify")
        good.append(v)
    if not good:
        raise NoteError("no known key signed the note")
    return good


def _check(v: Verifier, sig: Signature, text: str) -> bool:
    if v.kind == COSIGNATURE_V1:
        return cosignature_time(v, sig, text) is not None
    return _ed25519_ok(v.public, sig.data, text.encode())


def _ed25519_ok(public: bytes, signature: bytes, message: bytes) -> bool:
    if len(signature) != 64:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def cosignature_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode()


def cosignature_time(v: Verifier, sig: Signature, text: str) -> int | None:
    """The timestamp of a valid cosignature/v1 by `v` over the checkpoint `text`, or None."""
    if len(sig.data) != 72:
        return None
    ts = int.from_bytes(sig.data[:8], "big")
    if ts >= 1 << 63:
        return None
    return ts if _ed25519_ok(v.public, sig.data[8:], cosignature_message(text, ts)) else None


class Signer:
    """An Ed25519 private key that signs notes under a key name (the name is per note:
    a checkpoint is signed under its origin, as tlog-checkpoint recommends)."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self.private = private
        self.public = private.public_key().public_bytes_raw()

    def __repr__(self) -> str:
        return f"Signer({self.public.hex()[:16]}...)"  # never the private key

    def verifier(self, name: str) -> Verifier:
        return Verifier(name, ED25519, self.public)

    def sign(self, text: str, name: str) -> Signature:
        v = self.verifier(name)
        return Signature(name, v.id, self.private.sign(text.encode()))


# --- checkpoints ------------------------------------------------------------------------


class Checkpoint(Frozen):
    FIELDS = ("origin", "size", "root", "extensions")
    __slots__ = FIELDS
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...]

    def __init__(
        self, origin: str, size: int, root: bytes, extensions: tuple[str, ...] = ()
    ) -> None:
        self._set(origin, size, root, extensions)

    @property
    def text(self) -> str:
        lines = [self.origin, str(self.size), b64(self.root), *self.extensions]
        return "".join(line + "\n" for line in lines)


def checkpoint(origin: str, size: int, root: bytes, extensions: Sequence[str] = ()) -> Checkpoint:
    cp = Checkpoint(origin, size, root, tuple(extensions))
    for line in (origin, *extensions):
        if not line or "\n" in line or _CONTROL.search(line):
            raise NoteError("checkpoint lines are non-empty single lines")
    return cp


def parse_checkpoint(text: str) -> Checkpoint:
    """A checkpoint body (a note's text): origin, size, root, extension lines."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
        raise NoteError("a checkpoint is at least three non-empty lines")
    origin, size, root = lines[0], lines[1], lines[2]
    if not _SIZE.fullmatch(size):
        raise NoteError(f"a checkpoint's tree size is a decimal number: {size[:24]!r}")
    raw = unb64(root)
    if len(raw) != 32:
        raise NoteError("a checkpoint's root hash is 32 bytes")
    return Checkpoint(origin, int(size), raw, tuple(lines[3:-1]))


def split_notes(text: str) -> list[str]:
    """Signed notes one after another, each followed by a blank line (or the end): the
    form of a checkpoints file (`ways sensors verify --checkpoints`). A note ends at
    the first blank line after its signature lines; blank lines between notes are
    skipped."""
    notes: list[str] = []
    current: list[str] = []
    signed = False  # the current note has reached its signature lines
    for line in text.splitlines():
        if not line.strip():
            if signed:
                notes.append("".join(current))
                current, signed = [], False
            elif current:
                current.append("\n")
            continue
        if line.startswith(DASH) and current and (signed or current[-1] == "\n"):
            signed = True
        elif signed:  # text right after the signatures: the next note began
            notes.append("".join(current))
            current, signed = [], False
        current.append(line + "\n")
    if current and signed:
        notes.append("".join(current))
    return notes
