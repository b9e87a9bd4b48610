"""`ways sensors verify FILES --key ROOTKEY`: checking what a consumer received against the
pinned root key, with nothing from the state root (docs/evidence.md).

Read from the files (received.py): every chained record (its chain hash is its tree's next leaf, in
`rule_seq` order per sensor, rule and session) and every checkpoint record (its signed
note and the key certificates it carries). `--checkpoints FILE` adds signed notes, as a
witness or another consumer received them (key certificates or tree checkpoints, one
after another, each followed by a blank line).

The checks, each a break with its kind:

    key          a key certificate that does not verify under its parent key, is not
                 the tree of the keys it lists, or two different certificates of one
                 node (keytree.py)
    signature    a checkpoint signed by no key certified from the root, or whose known
                 key's signature fails
    witness      (--witness-key) a tree whose latest checkpoint carries no valid
                 cosignature of the witness, or one that carries a bad one
    fork         two checkpoints of one tree at one size with different roots
    differs      the records' tree does not have a checkpoint's root: the first record
                 that differs is in the range that checkpoint added, named exactly when
                 the range is one record or a copy of the checkpoint record carries the
                 batch's leaves and they rebuild the signed root (_first_differing);
                 else the range is named
    truncated    a checkpoint covers more records than the files hold
    unsigned     records after the last checkpoint of their tree (no signature covers
                 them)
    missing      (--all-present) a tree whose checkpoints verify and whose records the
                 files do not hold at all (a deleted session's file)

Consistency between successive checkpoints follows from each root matching the
records' tree at its size; where the records are absent (a tree the files do not
hold) nothing is claimed, and the tree is listed as absent. A checkpoint of another
machine (another root key) is not this key's to check: counted as foreign. Records of
a blocking rule (numbered by the hook: `seq` null) and `ways sensors fire`'s test
records have no checkpoints and are left to the chain check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..state.layout import rule_label
from . import keytree, merkle
from .note import (
    COSIGNATURE_V1,
    ED25519,
    Note,
    NoteError,
    Verifier,
    cosignature_time,
    parse_checkpoint,
)
from .received import Break, Leaf, Reader, Seen, Tree, read_key

__all__ = ["Break", "Result", "read_key", "verify"]


@dataclass
class Result:
    root: Verifier
    epochs: int  # epoch keys the certificates prove from the root
    trees: list[Tree]
    breaks: list[Break]
    absent: list[str]  # origins with checkpoints and no record in the files
    foreign: int = 0

    @property
    def ok(self) -> bool:
        return not self.breaks

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "root": self.root.vkey,
            "epochs": self.epochs,
            "trees": [t.as_json() for t in self.trees],
            "breaks": [b.as_json() for b in self.breaks],
            "absent": self.absent,
            "foreign": self.foreign,
        }


# --- checking --------------------------------------------------------------------------


def verify(
    files: list[str],
    root: Verifier,
    checkpoints: str | None = None,
    witness: Verifier | None = None,
    all_present: bool = False,
) -> Result:
    """`all_present`: a tree whose checkpoints verify from the root and whose records
    the files do not hold is a break (`missing`), not only listed as absent: a deleted
    session's file, seen from a witness's store or the machine's own record of it."""
    r = Reader(root)
    for path in files:
        r.file(path)
    if checkpoints:
        r.checkpoints_file(checkpoints)
    breaks = list(r.breaks)
    certs = [(n, parse_checkpoint(n.text)) for n in r.certs]
    publics, problems = keytree.epoch_keys(root, r.prefix[:-1], certs)
    breaks += [Break("key", f"a key certificate does not verify: {p}") for p in problems]
    absent: list[str] = []
    for seen in r.notes:
        _sign_check(seen, publics, breaks)
        if seen.epoch is None:
            continue
        sensor, _, rest = seen_origin(seen, r.prefix)
        rule, _, sid = rest.partition("/")
        if not sensor or not rule or not sid or "/" in sid:
            breaks.append(Break("signature", f"{seen.where}: an origin that names no tree"))
            continue
        _run_of(r, seen, sensor, rule, sid).checkpoints.append(seen)
    for t in sorted(r.trees.values(), key=lambda t: (t.origin, t.run)):
        if not t.leaves:
            if t.origin not in absent:
                absent.append(t.origin)
                signed = [c.size for c in t.checkpoints if c.epoch is not None]
                if all_present and signed:
                    msg = f"{t.origin}: checkpoints sign {max(signed)} records; the files hold none"
                    breaks.append(Break("missing", msg, session_id=t.session_id))
            continue
        _check_tree(t, breaks, witness)
    trees = [t for t in sorted(r.trees.values(), key=lambda t: (t.origin, t.run)) if t.leaves]
    return Result(root, len(publics), trees, breaks, absent, r.foreign)


def _run_of(r: Reader, seen: Seen, sensor: str, rule: str, sid: str) -> Tree:
    """The run of its tree a checkpoint belongs to: the one its file had reached, else
    (a note from --checkpoints) the run whose records have its root at its size, else
    the latest. A session resumed after its ledger entry was pruned numbers its records
    anew (verify/links.py: a restart): each run is a tree of its own, under one origin."""
    if seen.run is not None:
        return r.tree(sensor, rule, sid, seen.run)
    runs = r.runs_of(f"{r.prefix}{sensor}/{rule}/{sid}")
    for t in runs:
        ordered = [t.leaves[s].hash for s in sorted(t.leaves)]
        if 0 < seen.size <= len(ordered) and merkle.root_of(ordered[: seen.size]) == seen.root:
            return t
    return runs[-1] if runs else r.tree(sensor, rule, sid)


def seen_origin(seen: Seen, prefix: str) -> tuple[str, str, str]:
    return parse_checkpoint(seen.note.text).origin[len(prefix) :].partition("/")


def _sign_check(seen: Seen, publics: dict[int, bytes], breaks: list[Break]) -> None:
    """Which certified epoch key signed it (under the origin as key name)."""
    origin = parse_checkpoint(seen.note.text).origin
    keys = {Verifier(origin, ED25519, p).id: (e, p) for e, p in publics.items()}
    for sig in seen.note.signatures:
        found = keys.get(sig.id) if sig.name == origin else None
        if found is None:
            continue
        epoch, public = found
        try:
            from .note import verify as verify_note

            verify_note(Note(seen.note.text, [sig]), [Verifier(origin, ED25519, public)])
        except NoteError:
            breaks.append(
                Break(
                    "signature",
                    f"{seen.where}: the signature of epoch {epoch} "
                    f"on {origin} at size {seen.size} does not verify",
                )
            )
            return
        seen.epoch = epoch
        return
    breaks.append(
        Break(
            "signature",
            f"{seen.where}: the checkpoint of {origin} at size "
            f"{seen.size} is signed by no key certified from the root",
        )
    )


def _check_tree(t: Tree, breaks: list[Break], witness: Verifier | None) -> None:
    ordered = [t.leaves[s] for s in sorted(t.leaves)]
    sid, label = t.session_id, rule_label(t.sensor, t.rule)
    if not t.checkpoints and all(leaf.hooked for leaf in ordered):
        return  # a blocking rule's: chained by the hook, which signs nothing
    if not t.checkpoints:
        last = ordered[-1]
        breaks.append(
            Break(
                "unsigned",
                f"{label} of session {sid}: no checkpoint covers any of its records",
                last.file,
                ordered[0].line,
                ordered[0].rule_seq,
                sid,
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
        breaks.append(Break("differs", msg, first.file, first.line, first.rule_seq, sid))
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
            f"{seen.where} signed {sizes[-1]} records of {label} in session "
            f"{sid}; the files hold {tree.size}, the last rule_seq {last.rule_seq}"
        )
        breaks.append(Break("truncated", msg, last.file, last.line, last.rule_seq, sid))
    if wrong or len(by_size[sizes[-1]]) > 1 or sizes[-1] > tree.size:
        return
    epochs = [max(c.epoch or 0 for c in by_size[s]) for s in sizes]
    if epochs != sorted(epochs):
        msg = f"{t.origin}: a later checkpoint is signed by an earlier epoch's key"
        breaks.append(Break("signature", msg, session_id=sid))
    if tree.size > sizes[-1]:
        after = ordered[sizes[-1]]
        msg = (
            f"rule_seq {after.rule_seq}..{ordered[-1].rule_seq} of {label} in "
            f"session {sid} come after the last checkpoint (size {sizes[-1]})"
        )
        breaks.append(Break("unsigned", msg, after.file, after.line, after.rule_seq, sid))
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
