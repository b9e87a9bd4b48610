"""One tree's records held against its checkpoints (offline.py gathers both): the
checkpoints' roots against the leaves the files hold, the consistency between them,
the witness's cosignatures, the end of the tree, and the first record that differs.
"""

from __future__ import annotations

from ..state.layout import rule_label
from ..verify.breaks import Break
from . import merkle
from .carry import end_leaf
from .note import (
    COSIGNATURE_V1,
    Verifier,
    cosignature_time,
)
from .received import Leaf, Seen, Tree


def _at(kind: str, msg: str, leaf: Leaf, sid: str) -> Break:
    """A break at one record (a leaf of the tree)."""
    return Break(kind, msg, file=leaf.file, line=leaf.line, rule_seq=leaf.rule_seq, session_id=sid)


def _with_ends(t: Tree) -> list[Leaf]:
    """The records' leaves in rule_seq order, with an end leaf wherever a checkpoint
    record says its tree ended (its last leaf, at its size - 1)."""
    ends = {c.size - 1 for c in t.checkpoints if c.end}
    out: list[Leaf] = []
    for rec in [t.leaves[s] for s in sorted(t.leaves)] + [None]:
        while len(out) in ends:
            prev = out[-1] if out else None
            seq, file, line = (prev.rule_seq, prev.file, prev.line) if prev else (0, "", 0)
            out.append(Leaf(seq, end_leaf(len(out)), file, line, end=True))
        if rec is not None:
            out.append(rec)
    return out


def cosigned(seen: Seen, w: Verifier | None) -> bool:
    """The note carries a valid cosignature of the witness `w`."""
    if w is None or w.kind != COSIGNATURE_V1:
        return False
    return any(
        (sig.name, sig.id) == (w.name, w.id)
        and cosignature_time(w, sig, seen.note.text) is not None
        for sig in seen.note.signatures
    )


def check_tree(t: Tree, breaks: list[Break], witness: Verifier | None) -> None:
    ordered = _with_ends(t)
    sid, label = t.session_id, rule_label(t.sensor, t.rule)
    if not t.checkpoints and all(leaf.hooked for leaf in ordered):
        return  # a blocking rule's: chained by the hook, which signs nothing
    if not t.checkpoints:
        last = ordered[-1]
        breaks.append(
            Break(
                "unsigned",
                f"{label} of session {sid}: no checkpoint covers any of its records (the "
                "end is not proven)",
                file=last.file,
                line=ordered[0].line,
                rule_seq=ordered[0].rule_seq,
                session_id=sid,
            )
        )
        return
    tree = merkle.Tree(leaf.hash for leaf in ordered)
    by_size: dict[int, list[Seen]] = {}  # each distinct root signed at a size
    for seen in sorted(t.checkpoints, key=lambda s: s.size):
        same = by_size.setdefault(seen.size, [])
        other = next((o for o in same if o.root == seen.root), None)
        if other is None:
            same.append(seen)
            continue
        known = {(x.name, x.id, x.data) for x in other.note.signatures}  # another copy
        other.note.signatures += [
            x for x in seen.note.signatures if (x.name, x.id, x.data) not in known
        ]
        other.leaves = other.leaves or seen.leaves
        other.trusted = other.trusted or seen.trusted
    sizes = sorted(by_size)
    held = [s for s in sizes if s <= tree.size]
    wrong = [s for s in held if any(c.root != tree.root(s) for c in by_size[s])]
    if wrong:
        size = wrong[0]
        prev = max((s for s in _agreed(held, by_size) if s < size), default=0)
        seen = next(c for c in by_size[size] if c.root != tree.root(size))
        first = ordered[prev]
        exact = _first_differing(ordered, prev, seen, by_size[size])
        if exact is not None:
            first = exact
        if size - prev == 1 or exact is not None:
            what = f"rule_seq {first.rule_seq} ({first.file} line {first.line}) differs"
        else:
            end = ordered[size - 1]
            what = (
                f"the first record that differs is one of rule_seq {first.rule_seq}.."
                f"{end.rule_seq} (from {first.file} line {first.line})"
            )
        msg = f"{what} from what {seen.where} signed at size {size}"
        breaks.append(_at("differs", msg, first, sid))
    for size in sizes:
        if len(by_size[size]) > 1:
            a, b = by_size[size][:2]
            msg = (
                f"{a.where} and {b.where}: two signed checkpoints of {t.origin} at size "
                f"{size} with different roots (a forked history)"
            )
            breaks.append(Break("fork", msg, session_id=sid))
            break
    if sizes[-1] > tree.size:
        last = ordered[-1]
        seen = by_size[sizes[-1]][0]
        msg = (
            f"the end is not proven: {seen.where} signed {sizes[-1]} leaves of {label} in "
            f"session {sid}; the files hold {tree.size}, the last rule_seq {last.rule_seq}"
        )
        breaks.append(_at("truncated", msg, last, sid))
    if wrong or len(by_size[sizes[-1]]) > 1 or sizes[-1] > tree.size:
        return
    epochs = [max(c.epoch or 0 for c in by_size[s]) for s in sizes]
    if epochs != sorted(epochs):
        msg = f"{t.origin}: a later checkpoint is signed by an earlier epoch's key"
        breaks.append(Break("signature", msg, session_id=sid))
    if tree.size > sizes[-1]:
        after = ordered[sizes[-1]]
        msg = (
            f"rule_seq {after.rule_seq}..{ordered[-1].rule_seq} of {label} in session "
            f"{sid} come after the last checkpoint (size {sizes[-1]}): the end is not proven"
        )
        breaks.append(_at("unsigned", msg, after, sid))
    elif not ordered[-1].end:
        last = ordered[-1]
        msg = (
            f"the end of {t.sensor}/{t.rule} in session {sid} is not proven: its last "
            f"checkpoint (size {sizes[-1]}, rule_seq {last.rule_seq}) does not end the "
            "tree; records after it may have been cut"
        )
        breaks.append(_at("end", msg, last, sid))
    if witness is not None:
        _witnessed(t, {s: by_size[s][0] for s in sizes}, sizes, witness, breaks)


def _agreed(held: list[int], by_size: dict[int, list[Seen]]) -> list[int]:
    """The sizes the files are known to agree with up to: with checkpoints from elsewhere
    (`--checkpoints`: the trusted copy), only those sizes it holds, signed by a key
    proven from the root. The files' own checkpoints can be an attacker's, signed after
    T in between the trusted ones: they must not move the search past the first
    record that differs."""
    if not any(c.trusted for s in held for c in by_size[s]):
        return held
    return [s for s in held if any(c.trusted and c.epoch is not None for c in by_size[s])]


def _first_differing(ordered: list[Leaf], prev: int, seen: Seen, copies: list[Seen]) -> Leaf | None:
    """The exact first record that differs in the range (prev, size] the checkpoint
    added, from a copy of its record carrying the batch's leaves: taken only when the
    files' leaves before the batch and those leaves rebuild the signed root (so they
    are the leaves that were signed). A leaf is a chain hash, which covers every record
    before it: the first leaf that differs is the first record that does."""
    size = seen.size
    for c in copies:
        if c.root != seen.root or c.leaves is None:
            continue
        start, batch = c.leaves
        if start > prev or start + len(batch) != size:
            continue
        signed = [leaf.hash for leaf in ordered[:start]] + batch
        if merkle.root_of(signed) != seen.root:
            continue
        for i in range(prev, min(size, len(ordered))):
            if ordered[i].hash != signed[i]:
                return ordered[i]
    return None


def _witnessed(
    t: Tree, by_size: dict[int, Seen], sizes: list[int], w: Verifier, breaks: list[Break]
) -> None:
    for size in sizes:
        seen = by_size[size]
        for sig in seen.note.signatures:
            if (sig.name, sig.id) != (w.name, w.id):
                continue
            if w.kind != COSIGNATURE_V1 or cosignature_time(w, sig, seen.note.text) is None:
                breaks.append(
                    Break(
                        "witness",
                        f"{seen.where}: the cosignature of {w.name} "
                        f"on {t.origin} at size {size} does not verify",
                        session_id=t.session_id,
                    )
                )
                return
            t.cosigned += 1
            break
    last = by_size[sizes[-1]]
    if not any((s.name, s.id) == (w.name, w.id) for s in last.note.signatures):
        # another copy of the same checkpoint may carry it (the witness's own)
        breaks.append(
            Break(
                "witness",
                f"the latest checkpoint of {t.origin} (size "
                f"{sizes[-1]}) has no cosignature of {w.name}",
                session_id=t.session_id,
            )
        )
