"""Key files: an Ed25519 private key as PKCS#8 PEM, written and read without cryptography's
`serialization` package (a cost of every dispatcher's start, with the RSA, DSA, DH,
EC and SSH modules it loads), which is imported only for a key file in another PEM form
than the one written here; and config.yaml's `ways.evidence.epoch_seconds`."""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DEFAULT_EPOCH_SECONDS = 3600.0

# An Ed25519 key's PKCS#8 (RFC 8410) DER is this prefix and the 32-byte seed: its PEM is
# what cryptography writes for it (serialization.PrivateFormat.PKCS8, no encryption)
PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
PEM_HEAD, PEM_TAIL = "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----\n"


def pem(key: Ed25519PrivateKey) -> bytes:
    body = base64.b64encode(PKCS8_ED25519 + key.private_bytes_raw()).decode()
    return (PEM_HEAD + body + PEM_TAIL).encode()


# --- without a copy of the key left behind ---------------------------------------------
# A retired key must not stay readable in a running dispatcher's memory (through
# /proc/<pid>/mem, by a process with ptrace rights): Python frees a bytes or str without
# clearing it, so a key's seed, its DER and its PEM only ever live in bytearrays that
# are cleared after use, and every number computed from them is below 256 (CPython's
# cached small ints: no object holding a piece of the key is made). OpenSSL clears its
# own copy when the key object is freed.

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_VALUE = {c: i for i, c in enumerate(_ALPHABET)}
_BODY = 64  # base64 characters of the 48-byte DER


def wipe(*buffers: bytearray) -> None:
    for b in buffers:
        b[:] = bytes(len(b))


def generate() -> tuple[Ed25519PrivateKey, bytearray]:
    """A new key and its PEM (clear the PEM once written: `wipe`)."""
    seed = bytearray(32)
    fd = os.open("/dev/urandom", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if os.readv(fd, [seed]) != 32:
            raise OSError("a short read of /dev/urandom")
    finally:
        os.close(fd)
    try:
        return Ed25519PrivateKey.from_private_bytes(seed), encode(seed)
    finally:
        wipe(seed)


def encode(seed: bytearray) -> bytearray:
    """The PKCS#8 PEM `pem` writes, built in place from the seed."""
    der = bytearray(PKCS8_ED25519) + bytearray(32)
    der[16:] = seed
    out = bytearray(PEM_HEAD.encode()) + bytearray(_BODY) + bytearray(PEM_TAIL.encode())
    at = len(PEM_HEAD)
    for i in range(0, 48, 3):
        x, y, z = der[i], der[i + 1], der[i + 2]
        out[at] = _ALPHABET[x >> 2]
        out[at + 1] = _ALPHABET[((x & 3) << 4) | (y >> 4)]
        out[at + 2] = _ALPHABET[((y & 15) << 2) | (z >> 6)]
        out[at + 3] = _ALPHABET[z & 63]
        at += 4
    wipe(der)
    return out


def decode(raw: bytearray) -> bytearray | None:
    """The seed of a key file exactly as `pem` writes it, in a new bytearray (clear it
    after use); None for any other text."""
    head, tail = PEM_HEAD.encode(), PEM_TAIL.encode()
    if len(raw) != len(head) + _BODY + len(tail) or not raw.startswith(head):
        return None
    if not raw.endswith(tail):
        return None
    der = bytearray(48)
    at = len(head)
    for i in range(0, 48, 3):
        a, b, c, d = (_VALUE.get(raw[at + k], -1) for k in range(4))
        if min(a, b, c, d) < 0:
            wipe(der)
            return None
        der[i] = ((a << 2) & 255) | (b >> 4)
        der[i + 1] = ((b & 15) << 4) | (c >> 2)
        der[i + 2] = ((c & 3) << 6) | d
        at += 4
    seed = bytearray(32)
    if der[:16] == PKCS8_ED25519:
        seed[:] = memoryview(der)[16:]
        wipe(der)
        return seed
    wipe(der)
    return None


class NotEd25519(ValueError):
    """A key file holding another kind of key."""


def load(path: str, root: str) -> Ed25519PrivateKey:
    """A key file's key, read straight into a bytearray (at most 64 KiB) and cleared."""
    from ..state import secure

    fd = secure.open_private(path, os.O_RDONLY, root)
    try:
        raw = bytearray(min(os.fstat(fd).st_size, 64 << 10))
        del raw[os.readv(fd, [raw]) if raw else 0 :]
    finally:
        os.close(fd)
    seed = decode(raw)
    try:
        if seed is not None:
            return Ed25519PrivateKey.from_private_bytes(seed)
        from cryptography.hazmat.primitives import serialization  # another PEM form

        key = serialization.load_pem_private_key(bytes(raw), password=None)
    finally:
        wipe(raw, *([seed] if seed is not None else []))
    if not isinstance(key, Ed25519PrivateKey):
        raise NotEd25519("not an Ed25519 key")
    return key


def epoch_seconds() -> float:
    """`ways.evidence.epoch_seconds` from config.yaml (a positive number), else 3600."""
    from .cadence import setting

    value = setting("epoch_seconds")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_EPOCH_SECONDS
