"""One rule's Merkle tree in one session, and the signed checkpoints that close it.

The worker (worker.py) chains a batch, then hands it here before it commits the batch
to its cursor: the records' chain hashes become the tree's next leaves, and when a
checkpoint is due (cadence.py: at most one per `checkpoint_seconds`, the first batch of
a run at once) a checkpoint record is added at the end of the batch, so it reaches the
consumer with the records, through the same target, in the same attempt (in-band for
every target). Leaves left unsigned get a batch of their own once it is due. Before a
dispatcher leaves (crew.close_trees), an end leaf (carry.end_leaf) closes the tree and
its checkpoint record says `"end": true`: a file whose tree does not end so may have
lost its end (offline.py). The record's fields are docs/records.md's; `leaves` (the
leaves since the previous checkpoint, up to LEAVES_MAX) are unsigned, yet a verifier
that rebuilds the signed root from them names the first record that differs exactly.

Origin: `ways.sensors/<machine>/<sensor>/<rule>/<session id>` (keys.py names the
machine), unique to the machine, rule and session.

State: the cursor (worker.py) gains `"tree": {"size", "epoch", "witness": {url: size},
"signed", "ended", "last", "base"?}`, committed with the batch in one step (cursorlog.py).
The leaves are appended to `sessions/<sid>/cursors/<key>.leaves` (32 bytes each) after
it. The pending batch's records (and its end leaf) are always the tree's last leaves,
so at start the file is cut back to the cursor's size less the pending batch and its
leaves follow: a SIGKILL anywhere leaves the tree equal to the cursor's. A pending batch
finished again under a changed rule (refinish.py) is sealed anew (`reseal`). A cursor
begun from the ledger (the session folder went at its end, or retention.py removed it)
goes on from the tree the ledger kept (carry.py: `"base"`, its size and right edge; the
leaves file starts there). One that cannot (carry.py names the cases) gets no
checkpoints in that session: logged, counted as `trees_untracked` (`ways status`).
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..config.rules import LoadedRule
from ..state import events, secure
from ..state.counters import Tally
from ..state.cursorstate import Cursor
from ..state.layout import Layout
from ..state.session import Session
from . import cadence, carry, merkle, witness
from .keyrings import keyring
from .keys import machine_name
from .note import Note, b64, checkpoint

SCHEMA = "ways.sensor.checkpoint/1"
LEAVES_MAX = 512  # a batch's leaves ride in its checkpoint up to this many (22 KB base64)
WITNESS_BACKOFF = witness.BACKOFF


def for_rule(session: Session, rule: LoadedRule, tally: Tally) -> Sealer:
    """The sealer of a chained rule's worker (worker.py)."""
    leaves, timeout = session.layout.leaves(session.id, rule.key), rule.spec.timeout_s
    args = (session.layout, session.id, rule.sensor, rule.name, leaves, tally)
    return Sealer(*args, timeout=timeout)


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
        self.witnesses = [w for w in witnesses if w.log != "machine"]  # machinelog.py's
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
        self.cadence = cadence.configured()
        self.signed = 0  # the size the last checkpoint signed
        self.ended = False  # the last leaf is an end leaf (carry.end_leaf)
        self.closing = False  # the dispatcher is leaving: end the tree (crew.close_trees)
        self._asked = False  # the batch being sealed took that request
        self.last: dict[str, Any] = {}  # the last leaf's record: rule_seq, timestamp, agent
        self.next_at = float("-inf")  # when a checkpoint is next due (cadence.py)
        self.witness_at = float("-inf")  # when a witness may next be asked
        self._undo: tuple[dict[str, Any], int, bool, dict[str, Any]] | None = None

    @property
    def origin(self) -> str:
        if not self._origin:
            root = self.keys.ensure()
            self._origin = (
                f"{machine_name(root.public)}/{self.sensor}/{self.rule}/{self.session_id}"
            )
        return self._origin

    # --- state ---------------------------------------------------------------------------

    def restore(self, st: Cursor) -> None:
        """Rebuild the tree from the leaves file and the cursor `st` (module docstring);
        a cursor begun from the ledger goes on from the ledger's tree (carry.py)."""
        tree = st.tree
        if tree is None or not isinstance(tree.get("size"), int):
            rule_seq = int(st.rule_seq or 0)
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
            st.tree = tree
        size = tree["size"]
        self.base, self.edge = carry.base_of(tree)
        stored = self._read()
        leaves = carry.kept_leaves(stored, size, self.base, st.pending)
        if leaves is None:
            self.tally.count("trees_untracked")
            self._off("evidence.tree_lost", have=self.base + len(stored), want=size)
            return
        self.tree = carry.grown(self.base, self.edge, leaves)
        if leaves != stored:
            secure.replace_private(self.path, b"".join(leaves), self.layout.root)
        self.saved = size
        # a cursor from before the cadence: every batch was signed, and none ended
        self.signed = int(tree.get("signed", size))
        self.ended = bool(tree.get("ended", False))
        last = tree.get("last")
        self.last = last if isinstance(last, dict) else {}

    def _off(self, kind: str, **fields: Any) -> None:
        self.off = True
        self._log(kind, **fields)

    def _log(self, kind: str, **fields: Any) -> None:
        events.log(kind, sensor=self.sensor, rule=self.rule, session=self.session_id, **fields)

    def _read(self) -> list[bytes]:
        """The leaves file: the tree's leaves from `base` on."""
        return carry.read_leaves(self.path, self.layout.root)

    def _read_from(self, index: int) -> list[bytes]:
        """The file's leaves from the tree's leaf `index` (>= base) on."""
        return carry.read_leaves(self.path, self.layout.root, index - self.base)

    # --- a batch -------------------------------------------------------------------------

    def close_batch(
        self, records: list[dict[str, Any]], st: Cursor, now: float
    ) -> dict[str, Any] | None:
        """The worker's commit: the batch's records become leaves, and the checkpoint
        returned, when one is due (cadence.py) or the tree closes (`closing`), goes last
        in the batch (the cursor commits both in one step). A batch of no records takes
        only that checkpoint (`wants`)."""
        return self.seal(records, st, now)

    @property
    def open(self) -> bool:
        """Leaves after the tree's last end leaf: the dispatcher closes it before it leaves."""
        return not self.off and self.tree.size > 0 and not self.ended

    def due(self, now: float) -> bool:
        """Leaves not yet signed, and the last checkpoint old enough (cadence.py)."""
        return not self.off and self.tree.size > self.signed and now >= self.next_at

    def wants(self, now: float) -> bool:
        """A checkpoint of its own is due, or the tree's end (`closing`: crew.py)."""
        return self.due(now) or (self.closing and self.open)

    def reseal(self, st: Cursor, sealed: list[dict[str, Any]], now: float) -> None:
        """The pending batch was finished again (refinish.py: the rule changed while it
        waited): its records' new chain hashes replace the leaves its old ones were
        (`sealed`: the batch as it was pending), and a new checkpoint closes it,
        carrying the key certificates the old one carried (and its end, if it ended the
        tree). A witness that cosigned the old one sees another root at that size and
        refuses: the alarm says the history changed before delivery."""
        if self.off or st.tree is None:
            return
        cps = [r for r in sealed if r.get("section") == "checkpoint" and "chain" not in r]
        ended = any(r.get("end") is True for r in cps)
        old = sum(isinstance(r.get("chain"), dict) for r in sealed) + ended
        certs = [k for r in cps for k in r.get("keys") or ()]
        base = self.tree.size - old
        leaves = self._read()[: base - self.base]
        if len(leaves) < base - self.base:
            self._off("evidence.tree_lost", have=self.base + len(leaves), want=base)
            return
        self.tree = carry.grown(self.base, self.edge, leaves)
        self.saved = base
        st.tree["size"] = base
        if cps:  # the old checkpoint is undone: the one before it is the last signed
            self.signed = min(int(cps[-1].get("consistency", {}).get("from", base)), base)
        pending = st.pending or []
        self._pending = []
        self.ended = False
        self.closing = self.closing or ended
        cp = self.seal(pending, st, now, force=True)
        self._rewrite = True  # persist() writes the whole file: its tail changed
        if cp is not None:
            cp["keys"] = [*certs, *(k for k in cp["keys"] if k not in certs)]
            st.pending = [*pending, cp]

    def seal(
        self, records: list[dict[str, Any]], st: Cursor, now: float, force: bool = False
    ) -> dict[str, Any] | None:
        """Add the batch's chained records as leaves; return its checkpoint record when
        one is due, the tree closes, or `force` (None otherwise, or when signing failed:
        counted and logged, the batch goes without)."""
        # cleared once this batch is committed, or given up (rollback); a request that
        # comes meanwhile is the next batch's
        end = self._asked = self.closing
        tree = st.tree
        if self.off or tree is None:  # no tree: restore() turned the sealer off
            self.closing = False
            return None
        self._undo = (dict(tree), self.signed, self.ended, self.last)
        chained = [r for r in records if isinstance(r.get("chain"), dict)]
        self._pending = [carry.leaf(r) for r in chained]
        for leaf in self._pending:
            self.tree.append(leaf)
        if chained:
            last = chained[-1]
            self.ended = False
            self.last = {k: last.get(k) for k in ("rule_seq", "timestamp", "agent")}
        end = end and self.open
        self._note = ""
        tree.update(size=self.tree.size, ended=self.ended, last=self.last)
        if not (end or (force and self.tree.size > self.signed) or self.due(now)):
            return None
        if end:  # the tree's end: a leaf that says no record follows in this run
            self._pending.append(carry.end_leaf(self.tree.size))
            self.tree.append(self._pending[-1])
            self.ended = True
            tree.update(size=self.tree.size, ended=True)
        try:
            cp = self._checkpoint(tree, end, now)
        except Exception as exc:  # a key that cannot be read, a full disk: never the batch
            self.tally.count("checkpoint_errors")
            self._log("evidence.checkpoint_failed", error=type(exc).__name__)
            return None
        self.signed, self.next_at = self.tree.size, now + self.cadence.checkpoint
        tree["signed"] = self.signed
        return cp

    def rollback(self, st: Cursor) -> None:
        """The batch was not committed: forget its leaves (it is collected again)."""
        size = self.saved
        self.tree = carry.grown(self.base, self.edge, self._read()[: size - self.base])
        if st.tree is not None and self._undo is not None:
            st.tree, self.signed, self.ended, self.last = self._undo
        self._pending = []
        if self._asked:  # one try per request: the dispatcher asks again at a new size
            self.closing = self._asked = False

    def persist(self) -> None:
        """After the cursor holds the batch: append its leaves to the leaves file."""
        if self._asked:  # the end asked for is committed (or there was none to close)
            self.closing = self._asked = False
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

    def _checkpoint(self, tree: dict[str, Any], end: bool, now: float) -> dict[str, Any]:
        size = self.tree.size
        old = max(self.signed, self.base)  # no proof reaches below a resumed tree's edge
        origin = self.origin
        cp = checkpoint(origin, size, self.tree.root())
        epoch, note = self.keys.sign(cp.text, origin)
        # the consumer holds the path of the epoch of this tree's previous checkpoint
        new_keys = self.keys.new_certificates(int(tree.get("epoch", -1)), epoch)
        if end or now >= self.witness_at:
            self._witness(note, tree)
            self.witness_at = now + self.cadence.witness
        tree["epoch"] = epoch
        self._note = str(note)
        last = self.last
        out = {
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
        }
        if end:
            out["end"] = True  # the tree's last leaf is carry.end_leaf(size - 1)
        if size - old <= LEAVES_MAX:  # the leaves it adds: from the file, then the batch's
            unsent = self._read_from(old)[: self.saved - old] + self._pending
            out["leaves"] = b64(b"".join(unsent))
        return out

    def _witness(self, note: Note, tree: dict[str, Any]) -> None:
        sizes = tree.setdefault("witness", {})
        now = time.monotonic()
        deadline = now + self.timeout  # one for all of this checkpoint's requests
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
                w,
                old,
                self.tree.consistency_proof(old, self.tree.size),
                note,
                self.timeout,
                deadline,
            )
            if answer.status == "conflict":
                theirs = answer.size
                known = theirs is not None and max(self.base, 1) <= theirs <= self.tree.size
                if theirs is not None and known and theirs != old:
                    proof = self.tree.consistency_proof(theirs, self.tree.size)
                    answer = witness.add_checkpoint(w, theirs, proof, note, self.timeout, deadline)
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
