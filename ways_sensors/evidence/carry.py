"""A rule's tree carried across the end of its session folder, so a resumed session goes
on signing where it stopped.

The session folder (and with it the leaves file, sealer.py) goes at every session end
and when retention.py removes an abandoned session; the chain head survives in the
ledger (`ledger/<sid>.json`, session.py). The tree survives beside it, as the ledger's
`"trees": {"<sensor>/<rule>": entry}`:

    {"rule_seq": the cursor's rule_seq when it was written (the ledger head's),
     "size": the tree's size, "edge": [64 hex, ...] its right edge (merkle.Tree.edge:
     one hash per set bit of size, so at most 64 and for 40 records two),
     "epoch": the key epoch of its last checkpoint, "witness": {url: size cosigned},
     "signed": the size its last checkpoint signed, "ended": its last leaf is an end
     leaf (sealer.py), "last": {"rule_seq", "timestamp", "agent"} of its last record}

A resumed session's cursor starts from the ledger head (cursor.load_cursor); the sealer
then starts its tree from this entry (`resumed`): the same origin, leaves from `size`
on, every root and consistency proof from `size` on computable from the edge (merkle.py
says why). The entry's `rule_seq` must be the cursor's: a ledger written by a version
without trees, or an entry that disagrees with the head, cannot be continued.

What cannot continue (the sealer logs `evidence.untracked` with the reason, counts
`trees_untracked`, and `ways status` names the rule):

    no_tree       the ledger holds the head but no tree: written by a version before
                  this one
    head_moved    the entry's rule_seq is not the head's (the ledger was edited)
    bad_entry     the entry does not parse (size, edge)

A ledger entry pruned past retention.LEDGER_MAX (or deleted) restarts the chain at
rule_seq 1, and the tree with it at size 0 under the same origin: a second history of
that origin, which a witness that cosigned the first refuses (the ALARM).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ..state import cursorstate, secure
from ..state.layout import SMALL_STATE_CAP, Layout, read_state, rule_key, rule_label
from . import merkle

EDGE_MAX = 64  # hashes in an edge: a tree of fewer than 2**64 leaves


def read_leaves(path: str, root: str, start: int = 0) -> list[bytes]:
    """The leaves file's whole 32-byte leaves from its `start`th on (a torn tail is cut
    off)."""
    try:
        fd = secure.open_private(path, os.O_RDONLY, root)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, "rb") as f:
        f.seek(32 * start)
        data = f.read()
    return [data[i : i + 32] for i in range(0, len(data) - len(data) % 32, 32)]


def base_of(tree: dict[str, Any]) -> tuple[int, list[bytes]]:
    """(size, edge) the tree went on from (0, [] for a tree begun in this folder)."""
    base = tree.get("base")
    if not isinstance(base, dict):
        return 0, []
    return int(base["size"]), [bytes.fromhex(h) for h in base["edge"]]


def kept_leaves(
    stored: list[bytes], size: int, base: int, pending: list[dict[str, Any]] | None
) -> list[bytes] | None:
    """The tree's leaves from `base` to `size`, from the leaves file (`stored`, which
    starts at `base`) and the pending batch, whose records are always the tree's last
    leaves whatever the file holds (a kill before their append, or a batch finished
    again: refinish.py); None when the file is short of them."""
    last = [leaf(r) for r in pending or () if isinstance(r.get("chain"), dict)]
    if pending and pending[-1].get("end") is True and "chain" not in pending[-1]:
        last.append(end_leaf(size - 1))  # the batch closed the tree (sealer.py)
    keep = size - base - len(last)
    if keep < 0 or len(stored) < keep:
        return None
    return stored[:keep] + last


def leaf(record: dict[str, Any]) -> bytes:
    """A chained record's leaf: the 32 bytes of its chain hash."""
    return bytes.fromhex(record["chain"]["hash"])


def end_leaf(index: int) -> bytes:
    """The leaf that ends a tree at `index` (the dispatcher was leaving: sealer.py), its
    checkpoint record marked `"end": true`: SHA-256 of `ways.sensors/end`, a newline,
    the index in decimal and a newline. A chain hash (a leaf of a record) is the hash
    of a record's JSON, never of this text."""
    return hashlib.sha256(b"ways.sensors/end\n%d\n" % index).digest()


def grown(size: int, edge: list[bytes], leaves: list[bytes]) -> merkle.Tree:
    t = merkle.Tree.from_edge(size, edge) if size else merkle.Tree()
    for x in leaves:
        t.append(x)
    return t


def ledger_trees(layout: Layout, sid: str) -> dict[str, dict[str, Any]]:
    """Each chained rule's entry for the ledger, from the session folder's cursors and
    leaves files (read, never changed); a tree that cannot be rebuilt is left out (its
    resume then logs `no_tree`)."""
    out: dict[str, dict[str, Any]] = {}
    for sensor, rule in layout.cursor_rules(sid):
        key = rule_key(sensor, rule)
        cur = cursorstate.read(layout.cursors_dir(sid), key)
        tree = cur.tree if cur is not None else None
        if cur is None or tree is None:
            continue
        try:
            size = int(tree["size"])
            base, edge = base_of(tree)
            stored = read_leaves(layout.leaves(sid, key), layout.root)
            leaves = kept_leaves(stored, size, base, cur.pending)
            if leaves is None:
                continue
            t = grown(base, edge, leaves)
        except (KeyError, TypeError, ValueError, LookupError):
            continue
        out[rule_label(sensor, rule)] = {
            "rule_seq": cur.rule_seq,
            "size": t.size,
            "edge": [h.hex() for h in t.edge()],
            "epoch": tree.get("epoch", -1),
            "witness": tree.get("witness") or {},
            "signed": tree.get("signed", t.size),
            "ended": bool(tree.get("ended", False)),
            "last": tree.get("last") or {},
        }
    return out


def resumed(
    layout: Layout, sid: str, sensor: str, rule: str, rule_seq: int
) -> tuple[dict[str, Any] | None, str]:
    """The cursor's `tree` going on from the ledger's entry, or (None, the reason it
    cannot: the module docstring's list)."""
    ledger = read_state(layout.ledger(sid), SMALL_STATE_CAP)
    trees = ledger.get("trees") if isinstance(ledger, dict) else None
    entry = trees.get(rule_label(sensor, rule)) if isinstance(trees, dict) else None
    if not isinstance(entry, dict):
        return None, "no_tree"
    if entry.get("rule_seq") != rule_seq:
        return None, "head_moved"
    try:
        size, edge = int(entry["size"]), [str(h) for h in entry["edge"]]
        if len(edge) > EDGE_MAX:
            raise ValueError("edge too long")
        merkle.Tree.from_edge(size, [bytes.fromhex(h) for h in edge])
        witness = {str(k): int(v) for k, v in dict(entry.get("witness") or {}).items()}
        epoch, signed = int(entry.get("epoch", -1)), int(entry.get("signed", size))
    except (KeyError, TypeError, ValueError):
        return None, "bad_entry"
    last = entry.get("last") if isinstance(entry.get("last"), dict) else {}
    tree = {"size": size, "epoch": epoch, "witness": witness, "signed": signed, "last": last}
    tree["ended"] = entry.get("ended") is True
    tree["base"] = {"size": size, "edge": edge}
    return tree, ""
