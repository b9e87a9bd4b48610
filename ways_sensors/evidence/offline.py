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
    truncated    a checkpoint covers more records than the files hold (the end is not
                 proven)
    unsigned     records after the last checkpoint of their tree (no signature covers
                 them, and the end is not proven)
    end          the last checkpoint covers every record but does not end the tree
                 (sealer.py: a dispatcher ends it before it leaves): records after it
                 may have been cut, with their checkpoints. `running` moves this break,
                 and a tail of unsigned records, aside for a session that still runs
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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..verify.breaks import Break
from . import keytree, merkle
from .note import (
    ED25519,
    Note,
    NoteError,
    Verifier,
    parse_checkpoint,
)
from .received import Reader, Seen, Tree, read_key
from .treecheck import check_tree, cosigned

__all__ = ["Break", "Result", "read_key", "verify"]

# the order breaks are told in: what happened to the records before what cannot be checked
ORDER = (
    "differs",
    "fork",
    "missing",
    "truncated",
    "end",
    "unsigned",
    "witness",
    "signature",
    "key",
)
RANK = {kind: i for i, kind in enumerate(ORDER)}


@dataclass
class Result:
    root: Verifier
    epochs: int  # epoch keys the certificates prove from the root
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
    missing: dict[str, tuple[str, list[int]]] = {}  # --all-present: origin -> (sid, sizes)
    for seen in r.notes:
        sensor, _, rest = seen_origin(seen, r.prefix)
        rule, _, sid = rest.partition("/")
        if not sensor or not rule or not sid or "/" in sid:
            breaks.append(Break("signature", f"{seen.where}: an origin that names no tree"))
            continue
        origin = parse_checkpoint(seen.note.text).origin
        if not any(t.leaves for t in r.runs_of(origin)):
            # a tree the files hold no record of (a witness's whole store): absent, and
            # its signature is this verification's business only with --all-present,
            # where a signed tree with no records is a break (its certificates may
            # travel only with its own records)
            absent.append(origin)
            if all_present:
                _sign_check(seen, publics, breaks)
                if seen.epoch is not None:
                    missing.setdefault(origin, (sid, []))[1].append(seen.size)
            continue
        _sign_check(seen, publics, breaks)
        if seen.epoch is not None or cosigned(seen, witness):
            # a note whose key's certificate is nowhere here (cut with the records that
            # carried it) still says what the witness saw: a size, a root
            _run_of(r, seen, sensor, rule, sid).checkpoints.append(seen)
    for origin, (sid, sizes) in missing.items():
        msg = f"{origin}: checkpoints sign {max(sizes)} leaves; the files hold none of them"
        breaks.append(Break("missing", msg, session_id=sid))
    for t in sorted(r.trees.values(), key=lambda t: (t.origin, t.run)):
        if t.leaves:
            check_tree(t, breaks, witness)
    absent = sorted(set(absent))
    breaks.sort(key=lambda b: RANK.get(b.kind, len(RANK)))  # what the records lost, first
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
