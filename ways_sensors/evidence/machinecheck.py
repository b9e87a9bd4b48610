"""`ways sensors verify FILES --machine-log DIR`: the files against the machine log
(machinelog.py), read from its static tiles alone (a copy of `<state>/machine-log/`, or
what a static file server served of it).

The log: its checkpoint (signed by `--machine-key` when given: `ways keys show` prints
it; cosigned by `--witness-key` when given), its tiles and its entry bundles must all
be one tree, the checkpoint's. Each entry is a session tree's signed checkpoint (origin
`ways.sensors/<machine>/<sensor>/<rule>/<session>`), or a key certificate (origin
`ways.sensors/<machine>/keys/<node>`: counted, left to `--key`). Then, for every entry (of `--rule
SENSOR/RULE` only, when given):

    missing      the files hold no record of the entry's session: a session the
                 machine log holds was deleted whole (its file, its day)
    absent       the files hold the session, but not this checkpoint: its records
                 from there on (or its checkpoint records) were cut

A session the log holds with no record is a failure in this mode, whether or not a
witness cosigned it. Exit 3 on any of these or on a log that does not verify.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from . import merkle, tiles
from .note import NoteError, Verifier, parse, parse_checkpoint, verify
from .received import _records


@dataclass
class Problem:
    kind: str
    session_id: str | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "session_id": self.session_id, "message": self.message}


@dataclass
class Result:
    size: int = 0
    origin: str = ""
    signed: bool = False  # the checkpoint verified under the key given
    cosigned: bool = False  # and carries the cosignature of the witness given
    sessions: int = 0  # sessions the log holds (of the rule, with --rule)
    certificates: int = 0  # key certificates among its entries
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "origin": self.origin,
            "size": self.size,
            "signed": self.signed,
            "cosigned": self.cosigned,
            "sessions": self.sessions,
            "certificates": self.certificates,
            "problems": [p.as_json() for p in self.problems],
        }


def _log_entries(
    log_dir: str, key: Verifier | None, witness: Verifier | None, out: Result
) -> list[bytes] | None:
    try:
        with open(os.path.join(log_dir, "checkpoint"), "rb") as f:
            note = parse(f.read(1 << 20))
        cp = parse_checkpoint(note.text)
        if key is not None:
            verify(note, [key])
            out.signed = True
        if witness is not None:
            verify(note, [witness])
            out.cosigned = True
    except (OSError, NoteError) as exc:
        out.problems.append(Problem("log", None, f"the machine log's checkpoint: {exc}"))
        return None
    out.origin, out.size = cp.origin, cp.size
    log = tiles.Tiles(log_dir, cp.size)
    try:
        entries = list(log.entries())
        from_tiles = log.root()
    except (OSError, LookupError) as exc:
        out.problems.append(Problem("log", None, f"the machine log's tiles: {exc}"))
        return None
    if merkle.root_of(entries) != cp.root or from_tiles != cp.root:
        out.problems.append(
            Problem("log", None, "the machine log's entries or tiles are not its checkpoint's tree")
        )
        return None
    return entries


def check(
    paths: list[str],
    log_dir: str,
    key: Verifier | None = None,
    rule: str | None = None,
    witness: Verifier | None = None,
) -> Result:
    out = Result()
    entries = _log_entries(log_dir, key, witness, out)
    if entries is None:
        return out
    held: dict[str, list[tuple[str, str]]] = {}  # session -> [(label, checkpoint text)]
    for e in entries:
        try:
            body = parse_checkpoint(parse(e).text)
        except NoteError:
            out.problems.append(Problem("log", None, "an entry is no signed checkpoint"))
            continue
        parts = body.origin.split("/")
        if len(parts) == 4 and parts[2] == "keys":  # a key certificate (keytree.py)
            out.certificates += 1
            continue
        if len(parts) < 5:
            continue
        label, sid = f"{parts[-3]}/{parts[-2]}", parts[-1]
        if rule is None or label == rule:
            held.setdefault(sid, []).append((label, body.text))
    sessions: set[str] = set()
    texts: set[str] = set()
    for path in paths:
        for _, rec in _records(path):
            owner = rec.get("session_id")
            if isinstance(owner, str):
                sessions.add(owner)
            note = rec.get("checkpoint")
            if rec.get("section") == "checkpoint" and isinstance(note, str):
                try:
                    texts.add(parse(note).text)
                except NoteError:
                    pass  # the chain and --key checks report it
    out.sessions = len(held)
    for sid, cps in held.items():
        if sid not in sessions:
            labels = ", ".join(sorted({label for label, _ in cps}))
            msg = (
                f"session {sid} ({labels}): the machine log holds {len(cps)} checkpoint(s) "
                "of it and no file given holds any of its records (deleted?)"
            )
            out.problems.append(Problem("missing", sid, msg))
            continue
        lost = [(label, text) for label, text in cps if text not in texts]
        if lost:
            label, text = lost[0]
            size = text.split("\n")[1]
            msg = (
                f"session {sid} ({label}): {len(lost)} checkpoint(s) the machine log holds "
                f"are in no file given, the first at tree size {size} (records cut?)"
            )
            out.problems.append(Problem("absent", sid, msg))
    return out
