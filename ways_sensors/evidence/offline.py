"""`ways sensors verify FILES --key ROOTKEY`: checking what a consumer received against the
pinned root key, with nothing from the state root (docs/evidence.md).

Read from the files (received.py): every chained record (its chain hash is its tree's next leaf, in
`rule_seq` order per sensor, rule and session) and every checkpoint record (its signed
note and the key certificates it carries). `--checkpoints FILE` adds signed notes, as a
witness or another consumer received them (key certificates or tree checkpoints, one
after another, each followed by a blank line).

The checks, each a break with its kind:

    key          a key certificate that does not verify under the key before it, or is
                 not the key log's tree
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
    truncated    a checkpoint covers more records than the files hold (the end is not
                 proven)
    unsigned     records after the last checkpoint of their tree (no signature covers
                 them, and the end is not proven)
    end          the last checkpoint covers every record but does not end the tree
                 (sealer.py: a dispatcher ends it before it leaves): records after it
                 may have been cut, with their checkpoints. `running` moves this break,
                 and a tail of unsigned records, aside for a session that still runs

Consistency between successive checkpoints follows from each root matching the
records' tree at its size; where the records are absent (a tree the files do not
hold) nothing is claimed, and the tree is listed as absent. A checkpoint of another
machine (another root key) is not this key's to check: counted as foreign. Records of
a blocking rule (numbered by the hook: `seq` null) and `ways sensors fire`'s test
records have no checkpoints and are left to the chain check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import merkle
from .carry import end_leaf
from .keys import walk
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

# the order breaks are told in: what happened to the records before what cannot be checked
ORDER = ("differs", "fork", "truncated", "end", "unsigned", "witness", "signature", "key")
RANK = {kind: i for i, kind in enumerate(ORDER)}


@dataclass
class Result:
    root: Verifier
    epochs: int  # keys certified from the root (the root included)
    trees: list[Tree]
    breaks: list[Break]
    absent: list[str]  # origins with checkpoints and no record in the files
    foreign: int = 0
    running: list[str] = field(default_factory=list)  # sessions whose end is yet to come

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
            "running": self.running,
        }


def running(result: Result, live: Callable[[str], bool]) -> None:
    """Sessions that still run (`live`: this machine's state root has their folder):
    their tree's end is yet to come, so a missing end, or records not yet signed at
    their tail, are reported as running, not as breaks."""
    for b in list(result.breaks):
        if b.kind in ("end", "unsigned") and b.session_id and live(b.session_id):
            result.breaks.remove(b)
            if b.session_id not in result.running:
                result.running.append(b.session_id)


# --- checking --------------------------------------------------------------------------


def verify(
    files: list[str],
    root: Verifier,
    checkpoints: str | None = None,
    witness: Verifier | None = None,
) -> Result:
    r = Reader(root)
    for path in files:
        r.file(path)
    if checkpoints:
        r.checkpoints_file(checkpoints)
    breaks = list(r.breaks)
    try:
        publics = walk(root, r.certs)
    except NoteError as exc:
        breaks.append(Break("key", f"a key certificate does not verify: {exc}"))
        publics = [root.public]
    absent: list[str] = []
    for seen in r.notes:
        sensor, _, rest = seen_origin(seen, r.prefix)
        rule, _, sid = rest.partition("/")
        if not sensor or not rule or not sid or "/" in sid:
            breaks.append(Break("signature", f"{seen.where}: an origin that names no tree"))
            continue
        held = r.trees.get(parse_checkpoint(seen.note.text).origin)
        if held is None or not held.leaves:
            # a tree the files hold no record of (a witness's whole store): absent, and
            # its signature is not this verification's business (its certificates may
            # travel only with its own records)
            absent.append(parse_checkpoint(seen.note.text).origin)
            continue
        _sign_check(seen, publics, breaks)
        if seen.epoch is not None or _cosigned(seen, witness):
            # a note whose key's certificate is nowhere here (cut with the records that
            # carried it) still says what the witness saw: a size, a root
            held.checkpoints.append(seen)
    for t in sorted(r.trees.values(), key=lambda t: t.origin):
        if t.leaves:
            _check_tree(t, breaks, witness)
    absent = sorted(set(absent))
    breaks.sort(key=lambda b: RANK.get(b.kind, len(RANK)))  # what the records lost, first
    trees = [t for t in sorted(r.trees.values(), key=lambda t: t.origin) if t.leaves]
    return Result(root, len(publics), trees, breaks, absent, r.foreign)


def seen_origin(seen: Seen, prefix: str) -> tuple[str, str, str]:
    return parse_checkpoint(seen.note.text).origin[len(prefix) :].partition("/")


def _sign_check(seen: Seen, publics: list[bytes], breaks: list[Break]) -> None:
    """Which certified epoch key signed it (under the origin as key name)."""
    origin = parse_checkpoint(seen.note.text).origin
    keys = {Verifier(origin, ED25519, p).id: (e, p) for e, p in enumerate(publics)}
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


def _cosigned(seen: Seen, w: Verifier | None) -> bool:
    """The note carries a valid cosignature of the witness `w`."""
    if w is None or w.kind != COSIGNATURE_V1:
        return False
    return any(
        (sig.name, sig.id) == (w.name, w.id)
        and cosignature_time(w, sig, seen.note.text) is not None
        for sig in seen.note.signatures
    )


def _check_tree(t: Tree, breaks: list[Break], witness: Verifier | None) -> None:
    ordered = _with_ends(t)
    sid = t.session_id
    if not t.checkpoints and all(leaf.hooked for leaf in ordered):
        return  # a blocking rule's: chained by the hook, which signs nothing
    if not t.checkpoints:
        last = ordered[-1]
        breaks.append(
            Break(
                "unsigned",
                f"{t.sensor}/{t.rule} of session {sid}: no checkpoint covers any of its "
                "records (the end is not proven)",
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
    sizes = sorted(by_size)
    held = [s for s in sizes if s <= tree.size]
    wrong = [s for s in held if any(c.root != tree.root(s) for c in by_size[s])]
    if wrong:
        size = wrong[0]
        prev = max((s for s in held if s < size), default=0)
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
            f"the end is not proven: {seen.where} signed {sizes[-1]} leaves of "
            f"{t.sensor}/{t.rule} in session {sid}; the files hold {tree.size}, the last "
            f"rule_seq {last.rule_seq}"
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
            f"rule_seq {after.rule_seq}..{ordered[-1].rule_seq} of {t.sensor}/{t.rule} in "
            f"session {sid} come after the last checkpoint (size {sizes[-1]}): the end is "
            "not proven"
        )
        breaks.append(Break("unsigned", msg, after.file, after.line, after.rule_seq, sid))
    elif not ordered[-1].end:
        last = ordered[-1]
        msg = (
            f"the end of {t.sensor}/{t.rule} in session {sid} is not proven: its last "
            f"checkpoint (size {sizes[-1]}, rule_seq {last.rule_seq}) does not end the "
            "tree; records after it may have been cut"
        )
        breaks.append(Break("end", msg, last.file, last.line, last.rule_seq, sid))
    if witness is not None:
        _witnessed(t, {s: by_size[s][0] for s in sizes}, sizes, witness, breaks)


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
