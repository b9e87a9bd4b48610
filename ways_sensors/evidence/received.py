"""What a consumer received, as `ways sensors verify --key` reads it (offline.py checks
it): the chained records of each tree (sensor, rule, session), in `rule_seq` order by
their chain hashes, and every signed note found: the checkpoint records' notes and the
key certificates they carry, and `--checkpoints FILE`'s notes (signed notes one after
another, each followed by a blank line, as a witness or another consumer kept them).

Nothing here trusts what it reads: a note is only parsed (its signatures are offline.py's
to check), a line that is no record is left to the chain check, and every read is
bounded (verify/read.py's LINE_CAP per line, MAX_CHECKPOINTS_FILE for --checkpoints).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..pipeline.chain import GENESIS
from ..verify.breaks import Break
from ..verify.formats import from_text
from .keys import machine_name
from .note import (
    ED25519,
    Note,
    NoteError,
    Verifier,
    parse,
    parse_checkpoint,
    parse_vkey,
    split_notes,
)

MAX_CHECKPOINTS_FILE = 256 << 20


@dataclass
class Leaf:
    rule_seq: int
    hash: bytes
    file: str
    line: int
    hooked: bool = False  # `seq: null`: numbered by the hook (a blocking rule)
    end: bool = False  # no record: the leaf that ended the tree (carry.end_leaf)


@dataclass
class Seen:
    """A checkpoint note as found: where, and what it says."""

    note: Note
    where: str  # "FILE:LINE" or "--checkpoints"
    size: int = 0
    root: bytes = b""
    epoch: int | None = None
    leaves: tuple[int, list[bytes]] | None = None  # (from, the batch's leaves): unproven
    run: int | None = None  # the run of its tree its file had reached (None: a loose note)
    trusted: bool = False  # from --checkpoints: what another consumer or a witness holds
    end: bool = False  # its record says `"end": true`: its last leaf is an end leaf


@dataclass
class Tree:
    origin: str
    sensor: str
    rule: str
    session_id: str
    leaves: dict[int, Leaf] = field(default_factory=dict)
    checkpoints: list[Seen] = field(default_factory=list)
    cosigned: int = 0
    run: int = 0  # a session resumed after its ledger entry was pruned numbers anew: run 1

    def as_json(self) -> dict[str, Any]:
        sizes = sorted({c.size for c in self.checkpoints})
        return {
            "origin": self.origin,
            "sensor": self.sensor,
            "rule": self.rule,
            "session_id": self.session_id,
            "records": len(self.leaves),
            "checkpoints": len(self.checkpoints),
            "signed_size": sizes[-1] if sizes else 0,
            "epochs": sorted({c.epoch for c in self.checkpoints if c.epoch is not None}),
            "cosigned": self.cosigned,
            "run": self.run,
        }


def read_key(value: str, kind: int) -> Verifier:
    """A verifier key given as text, or the path of a file holding it (first line)."""
    text = value
    if "+" not in value and os.path.isfile(value):
        with open(value, encoding="utf-8") as f:
            text = f.readline()
    key = parse_vkey(text)
    if key.kind != kind:
        want = "an Ed25519 (0x01) key" if kind == ED25519 else "a cosignature/v1 (0x04) key"
        raise NoteError(f"{key.name} is not {want}")
    return key


# --- reading ---------------------------------------------------------------------------


def _records(path: str) -> Iterable[tuple[int, dict[str, Any]]]:
    """Each line that is a JSON object; a line over the chain check's cap is skipped in
    chunks, never held whole (verify/read.py: the same cap, the same reader)."""
    from ..verify.read import bounded_lines

    with open(path, "rb") as f:
        for n, line in bounded_lines(f):
            if line is None or not line.strip():
                continue
            try:
                obj = from_text(line.decode("utf-8", "surrogatepass"))  # any format ways writes
            except (ValueError, RecursionError):
                obj = _after_torn(line)  # the chain check reports lines that are no records
            if isinstance(obj, dict):
                yield n, obj


def _after_torn(line: bytes) -> Any:
    """The record after an unfinished line's torn end, as the chain check reads it
    (verify/read.py), or None."""
    at = line.rfind(RECORD_START)
    if at <= 0:
        return None
    try:
        return json.loads(line[at:].decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):
        return None


RECORD_START = b'{"schema":"ways.sensor.'  # verify/read.py's, as bytes


def _hex32(value: Any) -> bytes | None:
    if isinstance(value, str) and len(value) == 64:
        try:
            return bytes.fromhex(value)
        except ValueError:
            return None
    return None


class Reader:
    def __init__(self, root: Verifier) -> None:
        self.root = root
        self.prefix = machine_name(root.public) + "/"
        self.trees: dict[tuple[str, int], Tree] = {}  # (origin, run)
        self.runs: dict[str, int] = {}  # each origin's latest run in the files
        self.certs: list[Note] = []
        self.notes: list[Seen] = []
        self.breaks: list[Break] = []
        self.foreign = 0

    def tree(self, sensor: str, rule: str, sid: str, run: int | None = None) -> Tree:
        """A tree, in its latest run unless `run` says which."""
        origin = f"{self.prefix}{sensor}/{rule}/{sid}"
        run = self.runs.get(origin, 0) if run is None else run
        t = self.trees.get((origin, run))
        if t is None:
            t = self.trees[(origin, run)] = Tree(origin, sensor, rule, sid, run=run)
        return t

    def runs_of(self, origin: str) -> list[Tree]:
        return [t for (o, _), t in sorted(self.trees.items()) if o == origin]

    def _restarted(self, t: Tree, seq: int, link: dict[str, Any], h: bytes) -> Tree:
        """A record numbered 1 anew from the chain's start, not a copy of the run's first
        (as verify/links.py's chain check judges it): the tree's next run."""
        first = t.leaves.get(1)
        if seq != 1 or link.get("prev") != GENESIS or first is None or first.hash == h:
            return t
        self.runs[t.origin] = t.run + 1
        return self.tree(t.sensor, t.rule, t.session_id)

    def file(self, path: str, records: bool = True) -> None:
        """A file a consumer kept; `records` False: only its checkpoint records count
        (`--checkpoints` given another consumer's JSON lines)."""
        for n, rec in _records(path):
            if rec.get("section") == "checkpoint" and "chain" not in rec:
                where = f"{path}:{n}" + ("" if records else " (checkpoints)")
                seen = self._note(rec.get("checkpoint"), where, path, n)
                if seen is not None:
                    seen.leaves = _leaves(rec, seen.size)
                    origin = parse_checkpoint(seen.note.text).origin
                    seen.run = self.runs.get(origin, 0) if records else None
                    seen.trusted = not records
                    seen.end = rec.get("end") is True
                for cert in rec.get("keys") or ():
                    self._note(cert, where, path, n)
                continue
            if not records:
                continue
            if rec.get("test") is True:
                continue  # `ways sensors fire`: a test record, in a chain of its own
            link = rec.get("chain")
            seq = rec.get("rule_seq")
            h = _hex32(link.get("hash")) if isinstance(link, dict) else None
            if h is None or not isinstance(seq, int) or isinstance(seq, bool):
                continue
            names = [rec.get(k) for k in ("sensor", "rule", "session_id")]
            if not all(isinstance(x, str) and x and "/" not in x for x in names):
                continue
            sensor, rule, sid = (str(x) for x in names)
            assert isinstance(link, dict)  # h is its hash
            t = self._restarted(self.tree(sensor, rule, sid), seq, link, h)
            t.leaves.setdefault(seq, Leaf(seq, h, path, n, rec.get("seq", 0) is None))

    def checkpoints_file(self, path: str) -> None:
        """Signed notes one after another (a witness's), or JSON lines holding checkpoint
        records (another consumer's file: their notes, and the batches' leaves)."""
        with open(path, "rb") as f:
            data = f.read(MAX_CHECKPOINTS_FILE)
        if data.lstrip()[:1] == b"{":
            self.file(path, records=False)
            return
        for text in split_notes(data.decode("utf-8", "replace")):
            seen = self._note(text, f"{path} (checkpoints)", path, None)
            if seen is not None:
                seen.trusted = True

    def _note(self, text: Any, where: str, path: str, line: int | None) -> Seen | None:
        if not isinstance(text, str):
            return None
        try:
            n = parse(text)
            cp = parse_checkpoint(n.text)
        except NoteError as exc:
            self.breaks.append(
                Break("signature", f"{where}: not a signed checkpoint: {exc}", file=path, line=line)
            )
            return None
        if cp.origin.startswith(self.prefix + "keys/"):
            self.certs.append(n)
        elif cp.origin.startswith(self.prefix):
            seen = Seen(n, where, cp.size, cp.root)
            self.notes.append(seen)
            return seen
        else:
            self.foreign += 1
        return None


def _leaves(rec: dict[str, Any], size: int) -> tuple[int, list[bytes]] | None:
    """A checkpoint record's `leaves` (the batch's, from `consistency.from` to the
    checkpoint's size), as (from, leaves) when their count fits; unproven: offline.py
    takes them only if they rebuild the signed root."""
    text, cons = rec.get("leaves"), rec.get("consistency")
    start = cons.get("from") if isinstance(cons, dict) else None
    if not isinstance(text, str) or not isinstance(start, int) or not 0 <= start < size:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    if len(raw) != 32 * (size - start):
        return None
    return start, [raw[i : i + 32] for i in range(0, len(raw), 32)]
