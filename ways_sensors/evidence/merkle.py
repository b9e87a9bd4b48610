"""RFC 6962 Merkle trees (RFC 9162 section 2.1): hashing, inclusion and consistency proofs.

A rule's tree in a session has one leaf per chained record, in `rule_seq` order: the 32
bytes of the record's `chain.hash`. Hashing is RFC 6962's, so any RFC 6962 library
checks our roots and proofs:

    leaf hash  = SHA-256(0x00 || leaf)
    node hash  = SHA-256(0x01 || left || right)
    MTH({})    = SHA-256("")                     (the empty tree)
    MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n]))   k the largest power of two below n

`Tree` keeps every complete (perfect, aligned) subtree hash, level by level, so the
root at any size and every proof cost O(log n) hashes once the leaves are in; a leaf
costs two hashes amortised. A tree can also go on from its right edge alone (`edge`,
`Tree.from_edge`: the hashes of the perfect subtrees that make up its first n leaves,
one per set bit of n): every root at a size >= n, and every consistency proof from a
size >= n, needs no hash below that edge (each node a proof names either lies after
leaf n or is a union of edge subtrees and later leaves), so a resumed session's tree
continues from what its ledger kept (sealer.py, carry.py). The proofs are RFC 6962's
PATH and PROOF (section 2.1.1, 2.1.2); `verify_inclusion` and `verify_consistency` are
RFC 9162's algorithms (sections 2.1.3.2, 2.1.4.2) step by step, for callers holding
only a root and a proof.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import cast

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


class Tree:
    """An append-only RFC 6962 tree over leaves (the leaves' bytes, hashed here)."""

    def __init__(self, leaves: Iterable[bytes] = ()) -> None:
        # levels[j][i]: the hash of the perfect subtree of leaves [i * 2^j, (i + 1) * 2^j)
        self.levels: list[list[bytes]] = [[]]
        for leaf in leaves:
            self.append(leaf)

    @classmethod
    def from_edge(cls, size: int, edge: Sequence[bytes]) -> Tree:
        """The tree of `size` leaves known only by its right edge (`edge()`'s list);
        hashes below the edge stay unknown (None), and asking for one raises LookupError."""
        bits = [j for j in range(size.bit_length() - 1, -1, -1) if size >> j & 1]
        if len(edge) != len(bits) or size < 0:
            raise ValueError(f"an edge of {len(edge)} hashes is no tree of size {size}")
        t = cls()
        unknown = cast(bytes, None)  # a placeholder `hash` never returns (it raises)
        t.levels = [[unknown] * (size >> j) for j in range(max(size.bit_length(), 1))]
        for j, h in zip(bits, edge, strict=True):
            t.levels[j][-1] = h
        return t

    def edge(self) -> list[bytes]:
        """The right edge: the perfect subtrees' hashes that make up the whole tree,
        largest (leftmost) first."""
        n = self.size
        return [self.levels[j][-1] for j in range(n.bit_length() - 1, -1, -1) if n >> j & 1]

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def append(self, leaf: bytes) -> None:
        h = leaf_hash(leaf)
        levels = self.levels
        levels[0].append(h)
        j = 0
        while len(levels[j]) % 2 == 0:  # a right child completed its parent
            row = levels[j]
            parent = node_hash(row[-2], row[-1])
            if j + 1 == len(levels):
                levels.append([])
            levels[j + 1].append(parent)
            j += 1

    def hash(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) of a range a tree of size >= end holds: RFC 6962's split."""
        n = end - start
        if n <= 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0 and start % n == 0:  # perfect and aligned: stored
            h = self.levels[n.bit_length() - 1][start // n]
            if h is None:  # below the edge of a tree continued from it (from_edge)
                raise LookupError(f"leaves {start}..{end} are below the tree's known edge")
            return h
        k = _split(n)
        return node_hash(self.hash(start, start + k), self.hash(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        if not 0 <= size <= self.size:
            raise ValueError(f"no tree of size {size} (the tree has {self.size} leaves)")
        return self.hash(0, size)

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """PATH(index, D[0:size]) (RFC 6962 2.1.1), the sibling nearest the leaf first."""
        if not 0 <= index < size <= self.size:
            raise ValueError(f"no leaf {index} in a tree of size {size}")
        return self._path(index, 0, size)

    def _path(self, m: int, start: int, end: int) -> list[bytes]:
        n = end - start
        if n <= 1:
            return []
        k = _split(n)
        if m < k:
            return [*self._path(m, start, start + k), self.hash(start + k, end)]
        return [*self._path(m - k, start + k, end), self.hash(start, start + k)]

    def consistency_proof(self, old: int, new: int) -> list[bytes]:
        """PROOF(old, D[0:new]) (RFC 6962 2.1.2); empty when old is 0 or old == new."""
        if not 0 <= old <= new <= self.size:
            raise ValueError(f"no consistency proof from {old} to {new} (size {self.size})")
        if old == 0 or old == new:
            return []
        return self._subproof(old, 0, new, True)

    def _subproof(self, m: int, start: int, end: int, whole: bool) -> list[bytes]:
        n = end - start
        if m == n:
            return [] if whole else [self.hash(start, end)]
        k = _split(n)
        if m <= k:
            return [*self._subproof(m, start, start + k, whole), self.hash(start + k, end)]
        return [*self._subproof(m - k, start + k, end, False), self.hash(start, start + k)]


def root_of(leaves: Sequence[bytes]) -> bytes:
    return Tree(leaves).root()


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 2.1.3.2: does `proof` show `leaf` (its bytes) at `index` under `root`?"""
    if not 0 <= index < size:
        return False
    fn, sn = index, size - 1
    r = leaf_hash(leaf)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 2.1.4.2: is the tree (new, new_root) an append-only extension of (old,
    old_root)? The trivial cases (old 0, or old == new) take an empty proof."""
    if not 0 <= old <= new:
        return False
    if old == 0:
        return not proof
    if old == new:
        return not proof and old_root == new_root
    path = list(proof)
    if not path:
        return False
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0
