"""One rule's Merkle tree in one session, and the signed checkpoint that closes each batch.

The worker (worker.py) chains a batch, then hands it here before it commits the batch
to its cursor: the records' chain hashes become the tree's next leaves, and a
checkpoint record is added at the end of the batch, so it reaches the consumer with
the records, through the same target, in the same attempt (in-band for every target).
A checkpoint is signed at least once per delivered batch, and so at session end.

The checkpoint record (outside the chain: no `chain`, no `rule_seq`; docs/records.md):

    {"schema": "ways.sensor.checkpoint/1", "section": "checkpoint",
     "session_id", "agent", "timestamp" (the batch's last record's), "sensor", "rule",
     "last_rule_seq": the rule_seq of the tree's last leaf,
     "epoch": the key epoch that signed it,
     "checkpoint": the C2SP signed note (tlog-checkpoint; witness cosignatures added),
     "consistency": {"from": the previous checkpoint's size, "proof": [base64, ...]},
     "keys": [the key certificates this tree's consumer has not been sent yet: all of
              them from the root on at the tree's first checkpoint, then any new epoch's],
     "leaves": base64 of the batch's leaves (32 bytes each, from `consistency.from` to
               the tree's size), when there are at most LEAVES_MAX: unsigned, yet a
               verifier that rebuilds the signed root from them holds the leaves that
               were signed, and names the first record that differs exactly}

Origin: `ways.sensors/<machine>/<sensor>/<rule>/<session id>` (keys.py names the
machine), unique to the machine, rule and session.

State: the cursor (worker.py) gains `"tree": {"size", "epoch", "witness": {url: size},
"base"?: {"size", "edge"}}`,
committed with the batch in one step (the cursor log's line, cursorlog.py). The leaves
are appended to `sessions/<sid>/cursors/<key>.leaves` (32 bytes each) after it. The pending
batch's records are always the tree's last leaves, so at start the file is cut back to
the cursor's size less the pending batch and the batch's leaves follow, taken from its
records: a SIGKILL anywhere leaves the tree equal to the cursor's. A pending batch
finished again under a changed rule (refinish.py) is sealed anew (`reseal`): its new
leaves replace its old ones and a new checkpoint closes it (it was never delivered).
A cursor begun from the ledger (the session folder went at its end, or retention.py
removed it) goes on from the tree the ledger kept (carry.py: its size and right edge,
`"base"` in the cursor's tree; the leaves file then starts at that size). One that
cannot (carry.py names the cases) gets no checkpoints in that session: logged once and
counted as `trees_untracked`, which `ways status` shows (exit NOT_SIGNED).
"""

from __future__ import annotations

import os
import time
from typing import Any

from .. import events, secure
from ..counters import Tally
from ..cursor import Batch
from ..layout import Layout
from ..pipeline import dumps
from . import carry, merkle, witness
from .keys import Keyring, machine_name
from .note import Note, b64, checkpoint

SCHEMA = "ways.sensor.checkpoint/1"
LEAVES_MAX = 512  # a batch's leaves ride in its checkpoint up to this many (22 KB base64)
WITNESS_BACKOFF = 30.0  # seconds a failed witness is left alone (its old size is kept)
_keyrings: dict[str, Keyring] = {}  # one per state root and process: one rollover per run


def keyring(layout: Layout) -> Keyring:
    ring = _keyrings.get(layout.root)
    if ring is None:
        ring = _keyrings[layout.root] = Keyring(layout)
    return ring


class Sealer:
    def __init__(
        self,
        layout: Layout,
        session_id: str,
        sensor: str,
        rule: str,
        leaves_path: str,
        tally: Tally,
        witnesses: list[witness.Witness] | None = None,
        timeout: float = witness.TIMEOUT,
    ) -> None:
        self.layout = layout
        self.session_id, self.sensor, self.rule = session_id, sensor, rule
        self.path = leaves_path
        self.tally = tally
        self.keys = keyring(layout)
        if witnesses is None:
            witnesses, problems = witness.configured()
            for p in problems:
                events.log("evidence.witness_config", problem=p)
        self.witnesses = witnesses
        self.timeout = min(timeout, witness.TIMEOUT)
        self.tree = merkle.Tree()
        self.base, self.edge = 0, list[bytes]()  # what the tree went on from (carry.py): none
        self.saved = 0  # the tree's size up to the file's last leaf
        self.off = False  # this tree cannot be kept (see the module docstring)
        self.resting: dict[str, float] = {}  # witness url -> when it may be asked again
        self._pending: list[bytes] = []  # the leaves of the batch not yet in the file
        self._rewrite = False  # the file's tail is not the tree's (reseal)
        self._note = ""  # its checkpoint
        self._origin = ""

    @property
    def origin(self) -> str:
        if not self._origin:
            root = self.keys.ensure()
            self._origin = (
                f"{machine_name(root.public)}/{self.sensor}/{self.rule}/{self.session_id}"
            )
        return self._origin

    # --- state ---------------------------------------------------------------------------

    def restore(self, st: dict[str, Any]) -> None:
        """Rebuild the tree from the leaves file and the cursor `st` (module docstring);
        a cursor begun from the ledger goes on from the ledger's tree (carry.py)."""
        tree = st.get("tree")
        if not isinstance(tree, dict) or not isinstance(tree.get("size"), int):
            rule_seq = int(st.get("rule_seq") or 0)
            if rule_seq > 0:
                tree, why = carry.resumed(
                    self.layout, self.session_id, self.sensor, self.rule, rule_seq
                )
                if tree is None:
                    self.tally.count("trees_untracked")
                    self._off("evidence.untracked", reason=why)
                    return
            else:
                tree = {"size": 0, "epoch": -1, "witness": {}}
            st["tree"] = tree
        size = tree["size"]
        self.base, self.edge = carry.base_of(tree)
        stored = self._read()
        leaves = carry.kept_leaves(stored, size, self.base, st.get("pending"))
        if leaves is None:
            self.tally.count("trees_untracked")
            self._off("evidence.tree_lost", have=self.base + len(stored), want=size)
            return
        self.tree = carry.grown(self.base, self.edge, leaves)
        if leaves != stored:
            secure.replace_private(self.path, b"".join(leaves), self.layout.root)
        self.saved = size

    def _off(self, kind: str, **fields: Any) -> None:
        self.off = True
        self._log(kind, **fields)

    def _log(self, kind: str, **fields: Any) -> None:
        events.log(kind, sensor=self.sensor, rule=self.rule, session=self.session_id, **fields)

    def _read(self) -> list[bytes]:
        """The leaves file: the tree's leaves from `base` on."""
        return carry.read_leaves(self.path, self.layout.root)

    # --- a batch -------------------------------------------------------------------------

    def close_batch(self, b: Batch, st: dict[str, Any]) -> None:
        """The worker's commit: the batch's records become leaves, and its checkpoint
        record goes last in the batch (the cursor commits both in one step)."""
        if b.records:
            cp = self.seal(b.records, st)
            if cp is not None:
                b.add(cp, dumps(cp))

    def reseal(self, st: dict[str, Any], sealed: list[dict[str, Any]]) -> None:
        """The pending batch was finished again (refinish.py: the rule changed while it
        waited): its records' new chain hashes replace the leaves its old ones were
        (`sealed`: the batch as it was pending), and a new checkpoint closes it,
        carrying the key certificates the old one carried. A witness that cosigned the
        old one sees another root at that size and refuses: the alarm says the history
        changed before delivery."""
        if self.off or not isinstance(st.get("tree"), dict):
            return
        old = sum(isinstance(r.get("chain"), dict) for r in sealed)
        certs = [k for r in sealed if r.get("section") == "checkpoint" for k in r.get("keys") or ()]
        base = self.tree.size - old
        leaves = self._read()[: base - self.base]
        if len(leaves) < base - self.base:
            self._off("evidence.tree_lost", have=self.base + len(leaves), want=base)
            return
        self.tree = carry.grown(self.base, self.edge, leaves)
        self.saved = base
        st["tree"]["size"] = base
        pending = st.get("pending") or []
        self._pending = []
        cp = self.seal(pending, st)
        self._rewrite = True  # persist() writes the whole file: its tail changed
        if cp is not None:
            cp["keys"] = [*certs, *(k for k in cp["keys"] if k not in certs)]
            st["pending"] = [*pending, cp]

    def seal(self, records: list[dict[str, Any]], st: dict[str, Any]) -> dict[str, Any] | None:
        """Add the batch's chained records as leaves; return its checkpoint record (None
        when signing failed: counted and logged, the batch goes without)."""
        if self.off:
            return None
        chained = [r for r in records if isinstance(r.get("chain"), dict)]
        if not chained:
            return None
        old = self.tree.size
        self._pending = [carry.leaf(r) for r in chained]
        for leaf in self._pending:
            self.tree.append(leaf)
        self._note = ""
        tree = st["tree"]
        tree["size"] = self.tree.size
        try:
            return self._checkpoint(chained[-1], old, tree)
        except Exception as exc:  # a key that cannot be read, a full disk: never the batch
            self.tally.count("checkpoint_errors")
            events.log(
                "evidence.checkpoint_failed",
                sensor=self.sensor,
                rule=self.rule,
                session=self.session_id,
                error=type(exc).__name__,
            )
            return None

    def rollback(self, st: dict[str, Any]) -> None:
        """The batch was not committed: forget its leaves (it is collected again)."""
        size = self.saved
        self.tree = carry.grown(self.base, self.edge, self._read()[: size - self.base])
        if isinstance(st.get("tree"), dict):
            st["tree"]["size"] = size

    def persist(self) -> None:
        """After the cursor holds the batch: append its leaves to the leaves file."""
        pending = self._pending
        if self.off or not (pending or self._rewrite):
            return
        self._pending = []
        if self._rewrite:  # reseal: the file's tail is replaced
            self._rewrite = False
            leaves = self._read()[: self.saved - self.base] + pending
            secure.replace_private(self.path, b"".join(leaves), self.layout.root)
        else:
            fd = secure.open_private(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, self.layout.root
            )
            try:
                os.write(fd, b"".join(pending))
            finally:
                os.close(fd)
        self.saved += len(pending)
        if self._note and self.witnesses:  # the latest checkpoint with its cosignatures
            secure.replace_private(self.checkpoint_path, self._note.encode(), self.layout.root)

    @property
    def checkpoint_path(self) -> str:
        return self.path[: -len(".leaves")] + ".checkpoint"

    def _checkpoint(self, last: dict[str, Any], old: int, tree: dict[str, Any]) -> dict[str, Any]:
        size = self.tree.size
        added = len(self._pending)  # the batch's leaves, from `old` to `size`
        origin = self.origin
        cp = checkpoint(origin, size, self.tree.root())
        epoch, note = self.keys.sign(cp.text, origin)
        # certificate i certifies epoch i + 1: the consumer holds those up to the epoch of
        # this tree's previous checkpoint (none before its first)
        sent = max(int(tree.get("epoch", -1)), 0)
        new_keys = [str(c) for c in self.keys.certificates()[sent:epoch]]
        self._witness(note, tree)
        tree["epoch"] = epoch
        self._note = str(note)
        return {
            "schema": SCHEMA,
            "section": "checkpoint",
            "session_id": self.session_id,
            "agent": last.get("agent"),
            "timestamp": last.get("timestamp"),
            "sensor": self.sensor,
            "rule": self.rule,
            "last_rule_seq": last.get("rule_seq"),
            "epoch": epoch,
            "checkpoint": str(note),
            "consistency": {
                "from": old,
                "proof": [b64(h) for h in self.tree.consistency_proof(old, size)],
            },
            "keys": new_keys,
            **({"leaves": b64(b"".join(self._pending))} if added <= LEAVES_MAX else {}),
        }

    def _witness(self, note: Note, tree: dict[str, Any]) -> None:
        sizes = tree.setdefault("witness", {})
        now = time.monotonic()
        for w in self.witnesses:
            if self.resting.get(w.url, 0.0) > now:
                continue
            old = int(sizes.get(w.url, 0))
            if old > self.tree.size:
                old = 0
            if 0 < old < self.base:  # cosigned below what a resumed tree holds (carry.py)
                self.tally.count("witness_errors")
                self._log("evidence.witness_unprovable", witness=w.name, witness_size=old)
                continue
            answer = witness.add_checkpoint(
                w, old, self.tree.consistency_proof(old, self.tree.size), note, self.timeout
            )
            if answer.status == "conflict":
                theirs = answer.size
                known = theirs is not None and max(self.base, 1) <= theirs <= self.tree.size
                if theirs is not None and known and theirs != old:
                    proof = self.tree.consistency_proof(theirs, self.tree.size)
                    answer = witness.add_checkpoint(w, theirs, proof, note, self.timeout)
                resolved = answer.status == "cosigned"  # its history is this tree's
                self.tally.count("witness_resyncs" if resolved else "witness_conflicts")
                events.log(
                    "evidence.witness_conflict",
                    sensor=self.sensor,
                    rule=self.rule,
                    session=self.session_id,
                    witness=w.name,
                    sent_old=old,
                    witness_size=theirs,
                    size=self.tree.size,
                    resolved=resolved,
                )
                if not resolved:
                    continue
            if answer.status == "cosigned":
                note.signatures.extend(answer.cosignatures)
                sizes[w.url] = self.tree.size
                self.tally.count("witness_cosigned")
            elif answer.status == "error":
                self.resting[w.url] = now + WITNESS_BACKOFF
                self.tally.count("witness_errors")
                events.log(
                    "evidence.witness_error",
                    sensor=self.sensor,
                    rule=self.rule,
                    session=self.session_id,
                    witness=w.name,
                    detail=answer.detail,
                )
