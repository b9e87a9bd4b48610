"""SHA-256 and HMAC-SHA256 for what a blocking hook hashes, with a light mode for it.

`hashlib` loads OpenSSL's libcrypto on import (bench/RESULTS.md, Blocking path cost),
and `hmac` imports it too. A blocking hook hashes a handful of small records and would
pay that load on every matching tool call; the dispatcher hashes thousands of records,
where OpenSSL (SHA-NI) is faster per record than the interpreter's built-in SHA-256. So
a process chooses: `light()` (the hook's blocking path calls it first) hashes with the
built-in module and never loads OpenSSL; every other process loads hashlib on the first
hash and makes HMACs with `hmac.digest` (OpenSSL's, one call). The light mode's HMAC is
RFC 2104 over the built-in SHA-256; both modes give hashlib's and hmac's digests
(tests/test_sha.py). What the blocking path never reaches (the evidence's Merkle tree
and key ids) uses hashlib and hmac directly. The traces' ids and the metadata projection
hash through here all the same: spec.py imports both, so every command that reads sensor
files would otherwise load OpenSSL before, or without, hashing anything.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class _Hash(Protocol):
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...

    Hasher = Callable[[bytes], _Hash]


BLOCK = 64  # SHA-256's block size in bytes (RFC 2104's B)
_INNER = bytes(b ^ 0x36 for b in range(256))  # RFC 2104's ipad and opad, as hmac.py's
_OUTER = bytes(b ^ 0x5C for b in range(256))  # translate tables
_impl: list[Hasher] = []  # the chosen constructor, once chosen
_light: list[bool] = [False]  # light() chose the built-in module


def light() -> None:
    """Hash with the interpreter's built-in SHA-256 from now on (no OpenSSL load): for
    a short process that hashes little. Does nothing once a hash was made."""
    if not _impl:
        _impl.append(_builtin())
        _light[0] = True


def _builtin() -> Hasher:
    for name in ("_sha256", "_sha2"):  # 3.10 and 3.11; 3.12 and later
        try:
            module = __import__(name)
        except ImportError:
            continue
        constructor: Hasher = module.sha256
        return constructor
    from hashlib import sha256  # a build without it: OpenSSL's, as everywhere else

    return sha256


def _chosen() -> Hasher:
    if not _impl:
        from hashlib import sha256

        _impl.append(sha256)
    return _impl[0]


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 of `data`."""
    return _chosen()(data).hexdigest()


def hmac_sha256_hex(key: bytes, data: bytes) -> str:
    """The hex HMAC-SHA256 of `data` under `key` (RFC 2104), as
    hmac.new(key, data, hashlib.sha256).hexdigest() gives it."""
    if not _light[0]:
        import hmac

        return hmac.digest(key, data, "sha256").hex()
    h = _chosen()
    if len(key) > BLOCK:
        key = h(key).digest()
    key = key.ljust(BLOCK, b"\0")
    inner = h(key.translate(_INNER) + data).digest()
    return h(key.translate(_OUTER) + inner).hexdigest()
