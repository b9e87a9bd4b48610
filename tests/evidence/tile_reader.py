"""A tlog-tiles client for the tests, written from c2sp.org/tlog-tiles alone (and RFC
6962 section 2.1 through independent.py): it fetches `<prefix>/checkpoint`, the hash
tiles and the entry bundles over HTTP from a static file server, as a witness's
operator or a monitor would. Like independent.py it never imports ways_sensors."""

from __future__ import annotations

import functools
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from . import independent as ind

WIDTH = 256


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(folder: str) -> Iterator[str]:
    """Any static file server will do (the spec's point): Python's, on loopback."""
    handler = functools.partial(_Quiet, directory=folder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


def encode_index(n: int) -> str:
    """Zero-padded 3-digit path elements, all but the last prefixed with `x`."""
    parts = [f"{n % 1000:03d}"]
    n //= 1000
    while n > 0:
        parts.append(f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(reversed(parts))


def get(base: str, path: str) -> bytes:
    with urllib.request.urlopen(f"{base}/{path}", timeout=30) as r:
        assert r.status == 200, (path, r.status)
        return r.read()


def tile(base: str, level: int | str, n: int, size: int) -> bytes:
    """Tile `n` of `level` ("entries": the bundle) as a tree of `size` leaves has it: full,
    or the partial one of floor(size / 256**level) mod 256 hashes."""
    lv = 0 if level == "entries" else int(level)
    count = size // WIDTH**lv
    width = WIDTH if n < count // WIDTH else count % WIDTH
    assert width > 0, "empty tiles are never served"
    suffix = "" if width == WIDTH else f".p/{width}"
    return get(base, f"tile/{level}/{encode_index(n)}{suffix}")


def hashes(data: bytes) -> list[bytes]:
    assert len(data) % 32 == 0
    return [data[i : i + 32] for i in range(0, len(data), 32)]


def bundle(data: bytes) -> list[bytes]:
    """Big-endian uint16 length-prefixed entries."""
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i : i + 2], "big")
        out.append(data[i + 2 : i + 2 + n])
        i += 2 + n
    assert i == len(data), "a torn bundle"
    return out


def mth_of_hashes(hs: list[bytes]) -> bytes:
    """MTH from leaf hashes (RFC 6962's recursion, one level up)."""
    if len(hs) == 1:
        return hs[0]
    k = 1
    while k * 2 < len(hs):
        k *= 2
    return ind.sha256(b"\x01" + mth_of_hashes(hs[:k]) + mth_of_hashes(hs[k:]))


def leaf_hashes(base: str, size: int) -> list[bytes]:
    out: list[bytes] = []
    for n in range((size + WIDTH - 1) // WIDTH):
        out += hashes(tile(base, 0, n, size))
    assert len(out) == size
    return out


def entries(base: str, size: int) -> list[bytes]:
    out: list[bytes] = []
    for n in range((size + WIDTH - 1) // WIDTH):
        out += bundle(tile(base, "entries", n, size))
    assert len(out) == size
    return out


def read_log(base: str, name: str, public: bytes) -> tuple[str, int, bytes, list[bytes]]:
    """(checkpoint note, size, root, entries), every check the spec allows a client:
    the log's signature, each entry hashing to its level-0 tile hash, the tiles' root
    being the checkpoint's, and each level-1 hash the MTH of its full level-0 tile."""
    note = get(base, "checkpoint").decode()
    assert ind.signed_by(note, name, public), "the checkpoint is not the log's"
    origin, size, root, _ = ind.checkpoint_body(note)
    assert origin == name
    leaves = leaf_hashes(base, size)
    es = entries(base, size)
    assert [ind.sha256(b"\x00" + e) for e in es] == leaves
    assert mth_of_hashes(leaves) == root if size else root == ind.sha256(b"")
    full = size // WIDTH
    if full:
        level1: list[bytes] = []
        for n in range((full + WIDTH - 1) // WIDTH):
            level1 += hashes(tile(base, 1, n, size))
        assert level1 == [mth_of_hashes(leaves[i * WIDTH : (i + 1) * WIDTH]) for i in range(full)]
    return note, size, root, es


def consistent(base: str, old_size: int, old_root: bytes, new_size: int) -> bool:
    """Is the tree the tiles now serve at `new_size` an extension of (old_size,
    old_root)? Its first old_size leaf hashes must hash to the old root."""
    leaves = leaf_hashes(base, new_size)
    return mth_of_hashes(leaves[:old_size]) == old_root
