"""The key tree: which key signs which epoch, and the certificates that prove it from the
root key, in a number of certificates logarithmic in the epoch (keys.py keeps the
files; offline.py, and any witness that follows the root, check them).

A linear chain (each key certifying the next) costs a verifier every certificate
since the root, and nothing shorter can exist when each key is destroyed once its
successor is certified. So the future keys are certified ahead, in a tree (the
forward-secure tree scheme of Bellare and Miner, 1999): a key certifies its
children, then is destroyed; the children that are not used yet stay on disk.

    root          the pinned key (`ways keys show`): signs the spine, then is destroyed
    s0 ... s15    the spine, SPINE keys; s<h> is the root of a complete FANOUT-ary tree
                  of height h whose leaves are epoch keys: s0 is epoch 0 itself, s1's
                  children epochs 1..4, s2's grandchildren epochs 5..20, ...; s<h>'s
                  first epoch is (4^h - 1) / 3
    s<h>-<digits> a node under s<h>: child i of s<h> is s<h>-<i>, whose child j is
                  s<h>-<i><j> (digits base FANOUT, most significant first); a node
                  with h digits is a leaf, epoch first(h) + int(digits, FANOUT)

An inner node is expanded when its first epoch comes: it makes its FANOUT children,
signs their certificate and is destroyed. A certificate is a C2SP signed note whose
text is a tlog-checkpoint:

    ways.sensors/<machine>/keys/<node>   "spine", or the node whose children these are
    4                                    the number of keys certified (16 for the spine)
    <base64 RFC 6962 root>               MTH of the 32-byte public keys, in order
    key <base64 public key of child 0>
    ...

    — ways.sensors/<machine>/keys <Ed25519 signature of the parent key>

Epoch e's proof is the certificates on its path: the spine and one per inner node
above it, h + 1 certificates of about 450 bytes (h = 7 at 10,000 epochs). Two
different certificates of one node signed by its key are a forked key tree: neither
is trusted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import merkle
from .note import ED25519, Checkpoint, Note, NoteError, Verifier, b64, checkpoint, unb64
from .note import verify as verify_note

FANOUT = 4
SPINE = 16  # (4^16 - 1) / 3: about 1.4 billion epochs
_NODE = re.compile(r"s([0-9]{1,2})(?:-([0-3]{1,15}))?")


def first(h: int) -> int:
    """The first epoch under spine key s<h>."""
    return int((FANOUT**h - 1) // (FANOUT - 1))


def parse_node(node: str) -> tuple[int, str] | None:
    """(h, digits) of a node name, None for anything else."""
    m = _NODE.fullmatch(node)
    if m is None:
        return None
    h, digits = int(m.group(1)), m.group(2) or ""
    if h >= SPINE or len(digits) > h:
        return None
    return h, digits


def is_leaf(node: str) -> bool:
    p = parse_node(node)
    return p is not None and len(p[1]) == p[0]


def span(node: str) -> tuple[int, int]:
    """The epochs [start, end) under a node."""
    p = parse_node(node)
    if p is None:
        raise ValueError(f"not a key node: {node!r}")
    h, digits = p
    width = FANOUT ** (h - len(digits))
    start = first(h) + (int(digits, FANOUT) if digits else 0) * width
    return start, start + width


def path(epoch: int) -> list[str]:
    """The nodes from the spine key down to epoch `epoch`'s leaf."""
    if not 0 <= epoch < first(SPINE):
        raise ValueError(f"no epoch {epoch} in the key tree")
    h = 0
    while first(h + 1) <= epoch:
        h += 1
    index, digits = epoch - first(h), ""
    for _ in range(h):
        index, d = divmod(index, FANOUT)
        digits = str(d) + digits
    return [f"s{h}"] + [f"s{h}-{digits[:k]}" for k in range(1, h + 1)]


def children(node: str) -> list[str]:
    sep = "" if "-" in node else "-"
    return [f"{node}{sep}{i}" for i in range(FANOUT)]


def signer_name(name: str) -> str:
    """The key name every certificate is signed under."""
    return f"{name}/keys"


def certificate_text(name: str, node: str, publics: list[bytes]) -> str:
    """The certificate `node` ("spine" for the root's) signs for its children."""
    lines = [f"key {b64(p)}" for p in publics]
    return checkpoint(f"{name}/keys/{node}", len(publics), merkle.root_of(publics), lines).text


def certified_keys(cp: Checkpoint, node: str) -> list[bytes]:
    """The keys a certificate's body lists; NoteError unless it is well formed."""
    want = SPINE if node == "spine" else FANOUT
    keys = []
    for line in cp.extensions:
        if not line.startswith("key "):
            raise NoteError(f"the key certificate of {node} has a line that names no key")
        keys.append(unb64(line[4:]))
    if cp.size != want or len(keys) != want or any(len(k) != 32 for k in keys):
        raise NoteError(f"the key certificate of {node} does not certify {want} keys")
    if merkle.root_of(keys) != cp.root:
        raise NoteError(f"the key certificate of {node} is not the tree of its keys")
    return keys


def node_of(origin: str, name: str) -> str | None:
    """The node a certificate's origin names, None for an origin that is no certificate."""
    prefix = f"{name}/keys/"
    if not origin.startswith(prefix):
        return None
    node = origin[len(prefix) :]
    return node if node == "spine" or (parse_node(node) and not is_leaf(node)) else None


def epoch_keys(
    root: Verifier, name: str, certs: Iterable[tuple[Note, Checkpoint]]
) -> tuple[dict[int, bytes], list[str]]:
    """The epoch public keys the certificates prove from `root` (those whose path they
    hold), and a line per certificate refused: a bad signature, a malformed body, or
    two different certificates of one node (a forked key tree: neither is used)."""
    by_node: dict[str, dict[str, tuple[Note, Checkpoint]]] = {}
    for n, cp in certs:
        node = node_of(cp.origin, name)
        if node is not None:
            by_node.setdefault(node, {}).setdefault(n.text, (n, cp))
    problems: list[str] = []

    def keys_of(node: str, public: bytes) -> list[bytes]:
        good: list[list[bytes]] = []
        for n, cp in (by_node.get(node) or {}).values():
            try:
                verify_note(n, [Verifier(signer_name(name), ED25519, public)])
                good.append(certified_keys(cp, node))
            except NoteError as exc:
                problems.append(f"the key certificate of {node}: {exc}")
        if len(good) > 1:
            problems.append(f"two different certificates of key {node} (a forked key tree)")
            return []
        return good[0] if good else []

    publics: dict[str, bytes] = {f"s{h}": p for h, p in enumerate(keys_of("spine", root.public))}
    stack = list(publics)
    while stack:
        node = stack.pop()
        if is_leaf(node):
            continue
        for child, public in zip(children(node), keys_of(node, publics[node]), strict=False):
            publics[child] = public
            stack.append(child)
    return {span(n)[0]: p for n, p in publics.items() if is_leaf(n)}, problems
