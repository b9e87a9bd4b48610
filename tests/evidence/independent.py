"""A second verifier, written from RFC 6962 / RFC 9162 (section 2.1) and the C2SP texts
(signed-note, tlog-checkpoint, tlog-cosignature) alone. It never imports ways_sensors:
it is the check that what the package produces is what those texts say, not merely
what the package's own reader accepts. Ed25519 itself comes from `cryptography`.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

EM_DASH = "\u2014"


# --- RFC 6962 section 2.1 -------------------------------------------------------------


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def mth(leaves: list[bytes]) -> bytes:
    """MTH(D[n]): the Merkle Tree Hash, straight from the recursive definition."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return sha256(b"\x00" + leaves[0])
    k = 1
    while k * 2 < n:
        k *= 2
    return sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def verify_inclusion(
    leaf: bytes, leaf_index: int, tree_size: int, inclusion_path: list[bytes], root: bytes
) -> bool:
    """RFC 9162 2.1.3.2, step by step."""
    if leaf_index >= tree_size:
        return False
    fn, sn = leaf_index, tree_size - 1
    r = sha256(b"\x00" + leaf)
    for p in inclusion_path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = sha256(b"\x01" + p + r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = sha256(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, first_hash: bytes, second_hash: bytes, consistency_path: list[bytes]
) -> bool:
    """RFC 9162 2.1.4.2, step by step (the trivial first == second case aside)."""
    if first == second:
        return not consistency_path and first_hash == second_hash
    if first == 0:
        return not consistency_path
    if not consistency_path:
        return False
    path = list(consistency_path)
    if first & (first - 1) == 0:
        path.insert(0, first_hash)
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = sha256(b"\x01" + c + fr)
            sr = sha256(b"\x01" + c + sr)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = sha256(b"\x01" + sr + c)
        fn >>= 1
        sn >>= 1
    return fr == first_hash and sr == second_hash and sn == 0


def path(m: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of RFC 6962 2.1.1."""
    n = len(leaves)
    if n <= 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return [*path(m, leaves[:k]), mth(leaves[k:])]
    return [*path(m - k, leaves[k:]), mth(leaves[:k])]


# --- C2SP signed-note -----------------------------------------------------------------


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """(text, [(key name, base64-decoded signature)]): the text ends at the last blank
    line; every line after it is `— <name> <base64>`."""
    assert note.endswith("\n"), "a note ends in a newline"
    cut = note.rfind("\n\n")
    assert cut >= 0, "no blank line before the signatures"
    text, sig_block = note[: cut + 1], note[cut + 2 :]
    sigs = []
    for line in sig_block.split("\n")[:-1]:
        assert line.startswith(EM_DASH + " "), f"not a signature line: {line!r}"
        name, b64 = line[2:].split(" ")
        sigs.append((name, base64.b64decode(b64, validate=True)))
    return text, sigs


def parse_vkey(vkey: str) -> tuple[str, bytes, int, bytes]:
    """(name, key ID, signature type, public key) of `<name>+<hex id>+<base64>`."""
    name, hex_id, b64 = vkey.strip().split("+", 2)
    raw = base64.b64decode(b64, validate=True)
    return name, bytes.fromhex(hex_id), raw[0], raw[1:]


def ed25519_key_id(name: str, public: bytes) -> bytes:
    return sha256(name.encode() + b"\n" + b"\x01" + public)[:4]


def cosigner_key_id(name: str, public: bytes) -> bytes:
    return sha256(name.encode() + b"\n" + b"\x04" + public)[:4]


def _ed25519(public: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
        return True
    except InvalidSignature:
        return False


def signed_by(note: str, name: str, public: bytes) -> bool:
    """Does the note carry a valid Ed25519 note signature of (name, public)?"""
    text, sigs = split_note(note)
    want = ed25519_key_id(name, public)
    for sig_name, raw in sigs:
        if sig_name == name and raw[:4] == want:
            return _ed25519(public, raw[4:], text.encode())
    return False


def cosigned_by(note: str, name: str, public: bytes) -> int | None:
    """The timestamp of a valid cosignature/v1 of (name, public) on the note, or None."""
    text, sigs = split_note(note)
    want = cosigner_key_id(name, public)
    for sig_name, raw in sigs:
        if sig_name == name and raw[:4] == want and len(raw) == 4 + 8 + 64:
            (ts,) = struct.unpack(">Q", raw[4:12])
            message = b"cosignature/v1\n" + f"time {ts}\n".encode() + text.encode()
            return ts if _ed25519(public, raw[12:], message) else None
    return None


# --- C2SP tlog-checkpoint -------------------------------------------------------------


def checkpoint_body(note: str) -> tuple[str, int, bytes, list[str]]:
    """(origin, tree size, root hash, extension lines) of a checkpoint note's text."""
    text, _ = split_note(note)
    lines = text.split("\n")[:-1]
    assert len(lines) >= 3 and all(lines), "three or more non-empty lines"
    origin, size, root = lines[0], lines[1], lines[2]
    assert size == "0" or (size.isdigit() and not size.startswith("0")), size
    raw = base64.b64decode(root, validate=True)
    assert len(raw) == 32
    return origin, int(size), raw, lines[3:]


def key_tree(root_vkey: str, certificates: list[str]) -> dict[int, bytes]:
    """Epoch public keys proven from the root, as docs/evidence.md describes the key
    tree: the root signs the spine certificate (16 keys s0..s15); key s<h> is the root
    of a complete 4-ary tree of height h whose leaves are the epochs from (4^h - 1) / 3
    on; each certificate is a checkpoint `<name>/keys/<node>` signed under the key name
    `<name>/keys` by that node's key, listing its children's keys (`key <base64>`),
    with their RFC 6962 tree as its root. A node with h digits is a leaf."""
    name, _, kind, public = parse_vkey(root_vkey)
    assert kind == 1
    by_origin: dict[str, list[str]] = {}
    for c in certificates:
        by_origin.setdefault(checkpoint_body(c)[0], []).append(c)

    def children_of(node: str, signer: bytes) -> list[bytes]:
        valid = set()
        for cert in by_origin.get(f"{name}/keys/{node}", []):
            _, size, root, ext = checkpoint_body(cert)
            if not signed_by(cert, f"{name}/keys", signer):
                continue
            keys = [base64.b64decode(x.removeprefix("key "), validate=True) for x in ext]
            assert all(x.startswith("key ") for x in ext) and size == len(keys)
            assert mth(keys) == root
            valid.add(tuple(keys))
        assert len(valid) <= 1, f"two certificates of {node}"
        return list(valid.pop()) if valid else []

    epochs: dict[int, bytes] = {}
    todo = [(f"s{h}", h, 0, k) for h, k in enumerate(children_of("spine", public))]
    while todo:
        node, height, index, key = todo.pop()
        h = int(node[1:].split("-")[0])
        if height == 0:  # a leaf: the epochs before s<h>, and its place among them
            epochs[(4**h - 1) // 3 + index] = key
            continue
        sep = "-" if "-" not in node else ""
        for i, child in enumerate(children_of(node, key)):
            todo.append((f"{node}{sep}{i}", height - 1, index * 4 + i, child))
    return epochs
