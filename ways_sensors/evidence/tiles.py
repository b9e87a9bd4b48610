"""C2SP tlog-tiles (c2sp.org/tlog-tiles): an RFC 6962 tree kept as static files, so any
static file server can serve a log as it lies on disk.

    <prefix>/checkpoint                 the signed checkpoint (machinelog.py writes it)
    <prefix>/tile/<L>/<N>[.p/<W>]       level L's tile N: 256 hashes (8,192 bytes) when
                                        full; `.p/<W>` a partial one of W hashes
    <prefix>/tile/entries/<N>[.p/<W>]   entry bundle N: each entry a big-endian uint16
                                        length, then its bytes

<N> is written in 3-digit path elements, all but the last prefixed with `x` (1234067 is
`x001/x234/067`). Level 0 holds the leaf hashes; level L's hash i is the MTH of the
full tile i of level L-1 (so of 256**L leaves). A tree of size s has, at level L, the
partial tile of floor(s / 256**L) mod 256 hashes when that is not 0.

Writing (`append`): every file is whole before it has its name (a temporary file
renamed: secure.replace_private), so a reader or a SIGKILL sees a tile whole or not at
all. A partial tile is written for each size the log reaches; the caller commits the
size after the tiles (machinelog.py), and a size never committed is written again, the
same way, by the next append. Partial tiles whose full tile exists are removed once the
size past them is committed (`prune`), as the spec allows, and those of a size no
checkpoint signed once the next size is committed (`drop`). Reading (`Tiles`): any root,
inclusion or consistency proof of the tree from its tiles alone, O(log n) tiles each.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence

from ..state import secure
from . import merkle

WIDTH = 256
HASH = 32
MAX_ENTRY = 0xFFFF


def index_path(n: int) -> str:
    """Tile index `n` as tlog-tiles spells it: `x001/x234/067`."""
    parts = [f"{n % 1000:03d}"]
    n //= 1000
    while n:
        parts.append(f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(reversed(parts))


def tile_path(prefix: str, level: int | str, n: int, width: int = WIDTH) -> str:
    """A hash tile (level a number) or an entry bundle (level "entries")."""
    tail = "" if width == WIDTH else f".p/{width}"
    return f"{prefix}/tile/{level}/{index_path(n)}{tail}"


def _width(size: int, level: int, n: int) -> int:
    """The width of tile `n` at `level` in a tree of `size` leaves (0: no such tile)."""
    count = size // WIDTH**level  # hashes at this level
    if n < count // WIDTH:
        return WIDTH
    return count % WIDTH if n == count // WIDTH else 0


def _read(path: str, cap: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(cap + 1)


def fold(hashes: Sequence[bytes]) -> bytes:
    """The MTH of a perfect subtree given its 2**k lowest hashes."""
    row = list(hashes)
    while len(row) > 1:
        row = [merkle.node_hash(row[i], row[i + 1]) for i in range(0, len(row), 2)]
    return row[0]


class Tiles(merkle.Tree):
    """A tree of `size` leaves read from its tiles under `prefix` (proofs and roots as
    merkle.Tree gives them). A missing or short tile raises LookupError."""

    def __init__(self, prefix: str, size: int) -> None:
        super().__init__()
        self.prefix, self._size = prefix, size
        self._cache: dict[tuple[int, int], list[bytes]] = {}

    @property
    def size(self) -> int:
        return self._size

    def tile(self, level: int, n: int) -> list[bytes]:
        """The hashes of tile `n` at `level`, as wide as this tree has it."""
        key = (level, n)
        if key not in self._cache:
            width = _width(self._size, level, n)
            if not width:
                raise LookupError(f"no tile {level}/{n} in a tree of {self._size}")
            try:
                data = _read(tile_path(self.prefix, level, n, width), WIDTH * HASH)
            except FileNotFoundError:
                if width == WIDTH:
                    raise LookupError(f"tile {level}/{n} is missing") from None
                data = self._full_prefix(level, n, width)
            if len(data) < width * HASH:
                raise LookupError(f"tile {level}/{n} is short")
            self._cache[key] = [data[i : i + HASH] for i in range(0, width * HASH, HASH)]
        return self._cache[key]

    def _full_prefix(self, level: int, n: int, width: int) -> bytes:
        """A partial tile pruned once its full tile came (only a writer reading a size it
        committed before a later append): the full tile's first hashes are the same."""
        try:
            return _read(tile_path(self.prefix, level, n), WIDTH * HASH)[: width * HASH]
        except FileNotFoundError:
            raise LookupError(f"tile {level}/{n}.p/{width} is missing") from None

    def hash(self, start: int, end: int) -> bytes:
        n = end - start
        if n <= 0:
            return merkle.EMPTY_ROOT
        if n & (n - 1) == 0 and start % n == 0:  # perfect and aligned: from one tile
            k = n.bit_length() - 1
            level, r = divmod(k, 8)
            first = (start >> k) << r  # its first hash at `level`
            hashes = self.tile(level, first // WIDTH)
            off = first % WIDTH
            return fold(hashes[off : off + (1 << r)])
        k = merkle._split(n)
        return merkle.node_hash(self.hash(start, start + k), self.hash(start + k, end))

    def entries(self, start: int = 0) -> Iterator[bytes]:
        """Every entry from `start` on, from the entry bundles."""
        n = start // WIDTH
        while n * WIDTH < self._size:
            width = _width(self._size, 0, n)
            bundle = read_bundle(tile_path(self.prefix, "entries", n, width))
            if len(bundle) < width:
                raise LookupError(f"entry bundle {n} holds {len(bundle)} of {width} entries")
            for i, e in enumerate(bundle[:width]):
                if n * WIDTH + i >= start:
                    yield e
            n += 1


def bundle_bytes(entries: Sequence[bytes]) -> bytes:
    out = bytearray()
    for e in entries:
        if len(e) > MAX_ENTRY:
            raise ValueError(f"an entry of {len(e)} bytes (at most {MAX_ENTRY})")
        out += len(e).to_bytes(2, "big") + e
    return bytes(out)


def read_bundle(path: str) -> list[bytes]:
    data = _read(path, WIDTH * (MAX_ENTRY + 2))
    out, i = [], 0
    while i + 2 <= len(data):
        n = int.from_bytes(data[i : i + 2], "big")
        if i + 2 + n > len(data):
            raise LookupError(f"{path}: a torn entry")
        out.append(data[i + 2 : i + 2 + n])
        i += 2 + n
    return out


def _write(path: str, data: bytes, root: str) -> None:
    secure.ensure_private_dir(os.path.dirname(path), root)
    secure.replace_private(path, data, root)


def append(prefix: str, root: str, size: int, entries: Sequence[bytes]) -> int:
    """Write the bundles and tiles of the tree of `size` leaves plus `entries` (the
    tree's tiles up to `size` already on disk); the new size. The caller commits it."""
    if not entries:
        return size
    old = Tiles(prefix, size)
    new = size + len(entries)
    first = size // WIDTH
    kept = []
    if size % WIDTH:
        path = tile_path(prefix, "entries", first, size % WIDTH)
        try:
            kept = read_bundle(path)[: size % WIDTH]
        except FileNotFoundError:
            kept = read_bundle(tile_path(prefix, "entries", first))[: size % WIDTH]
    bundled = kept + list(entries)
    for i in range(0, len(bundled), WIDTH):
        chunk = bundled[i : i + WIDTH]
        _write(
            tile_path(prefix, "entries", first + i // WIDTH, len(chunk)), bundle_bytes(chunk), root
        )
    added = [merkle.leaf_hash(e) for e in entries]
    level, lo = 0, size  # hashes at `level` before the append
    while added:
        n0 = lo // WIDTH
        hashes = (old.tile(level, n0) if lo % WIDTH else []) + added
        added = []
        for i in range(0, len(hashes), WIDTH):
            chunk = hashes[i : i + WIDTH]
            _write(tile_path(prefix, level, n0 + i // WIDTH, len(chunk)), b"".join(chunk), root)
            if len(chunk) == WIDTH:
                added.append(fold(chunk))
        level, lo = level + 1, lo // WIDTH
    return new


def drop(prefix: str, old: int, new: int) -> None:
    """Remove the partial tiles and bundle of size `old`, no checkpoint's, that the
    committed size `new` replaced (the spec asks only for those of checkpointed sizes:
    kept, they would grow to 255 partial bundles per full one)."""
    for level in range(8):
        count_old, count_new = old // WIDTH**level, new // WIDTH**level
        width = count_old % WIDTH
        if not count_old:
            break
        if width and (count_old // WIDTH, width) != (count_new // WIDTH, count_new % WIDTH):
            names: list[int | str] = ["entries", level] if level == 0 else [level]
            for name in names:
                try:
                    os.unlink(tile_path(prefix, name, count_old // WIDTH, width))
                except FileNotFoundError:
                    pass


def prune(prefix: str, size: int) -> None:
    """Remove the partial tiles and bundles whose full tile a committed `size` has."""
    for level in ["entries", *range(8)]:
        lv = 0 if level == "entries" else int(level)
        full = size // WIDTH ** (lv + 1)  # full tiles at this level
        if not full:
            break
        for n in (full - 1, full - 2):  # those an append since the last prune completed
            if n >= 0:
                shutil.rmtree(tile_path(prefix, level, n) + ".p", ignore_errors=True)
