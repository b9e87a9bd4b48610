"""Per-rule counters, totalled across sessions: `<state>/counters/<rule key>.json`
(layout.py), {kind: total}.

Each dispatcher (and the blocking path) adds its deltas under an flock of the file
(files.update_json_locked: rewritten in place, never emptied by a kill). A rule's
worker adds them at each durable step, right after a batch is committed (dispatched,
drops, redactions) and after each attempt is settled (delivered, failures, retries,
parked), and the dispatcher once a second and as it exits for the rest: a dispatcher
killed again and again within a second of starting still leaves its counts, losing
at most the step a kill lands in the middle of (the first hostile pass found every
counter 0 after 10,000 records delivered under repeated kills: the counts lived in
memory until a once-a-second flush no dispatcher lived to make).

Beside the totals the file keeps the rule's health under "health" (services/health.py
reads it; content-free): {"last_delivered_ns", "last_error_ns", "last_error": the
outcome's detail, "failing_since_ns": the first failure after the latest delivery, 0
while the latest attempt passed}. Written with the deltas, under the same flock, so it
costs no write of its own.
"""

from __future__ import annotations

import _thread  # not threading: the blocking path's imports (dispatch/blocking.py)
import os

from . import secure
from .files import update_json_locked
from .layout import Layout, read_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .cursorstate import Cursor

KINDS = (
    "dispatched",
    "delivered",
    "held",  # taken into a span still open (traces): no request made for them yet
    "unconfirmed",  # sent where no acknowledgement can come (syslog udp): not delivered
    "timeouts",
    "kills",
    "refusals",
    "errors",
    "drops",
    "retries",
    "rejected",  # at_least_once records a consumer refused for good: dead letters
    "lost",
    "redactions",
)


def add(
    rid: str,
    deltas: dict[str, int],
    layout: Layout | None = None,
    marks: dict[str, Any] | None = None,
) -> None:
    """Add `deltas` to the rule's totals and apply its health `marks` (Tally's),
    atomically with respect to other writers."""
    deltas = {k: v for k, v in deltas.items() if v}
    if not deltas and not marks:
        return
    layout = layout or Layout()
    secure.ensure_private_dir(layout.counters_dir(), layout.root)

    def change(totals: dict[str, Any]) -> bool:
        for k, v in deltas.items():
            totals[k] = int(totals.get(k, 0)) + v
        if marks:
            health = totals.get("health")
            totals["health"] = _marked(health if isinstance(health, dict) else {}, marks)
        return True

    update_json_locked(layout.counters(rid), change)


MARKS = 64  # sessions whose last counted commit a rule's file remembers (the latest)


def committed(tally: Tally, sid: str, seq: int | None, counts: dict[str, int]) -> None:
    """A committed batch's counts (dispatched, drops, redactions), added once: with the
    commit's mark (the session and the cursor's rule_seq after it), atomically, so a
    kill between the cursor's save and this leaves the mark behind the cursor, and the
    next worker's `uncounted` adds them; a mark at or past `seq` adds nothing. `seq`
    None (a blocking rule's retries, numbered by the hook): counted in the tally."""
    counts = {k: v for k, v in counts.items() if v}
    if seq is None:
        for kind, n in counts.items():
            tally.count(kind, n)
        return
    layout = tally.layout or Layout()

    def change(totals: dict[str, Any]) -> bool:
        node = totals.get("marks")
        marks: dict[str, Any] = node if isinstance(node, dict) else {}
        if int(marks.get(sid, 0)) >= seq:
            return False  # counted before a kill
        for k, v in counts.items():
            totals[k] = int(totals.get(k, 0)) + v
        marks.pop(sid, None)
        marks[sid] = seq  # the latest last: the oldest go first
        totals["marks"] = dict(list(marks.items())[-MARKS:])
        return True

    try:
        secure.ensure_private_dir(layout.counters_dir(), layout.root)
        update_json_locked(layout.counters(tally.rid), change)
    except OSError:  # a refused path (logged by secure.py), a full disk: never the batch
        for kind, n in counts.items():
            tally.count(kind, n)  # the tally's flush tries the file again


def uncounted(tally: Tally, sid: str, st: Cursor) -> None:
    """At a worker's start: the commit that left the cursor's pending batch, when a kill
    came before its counts (its mark is behind the cursor); never counted twice."""
    data = read_state((tally.layout or Layout()).counters(tally.rid))
    marks = data.get("marks") if isinstance(data, dict) else None
    mark = marks.get(sid, 0) if isinstance(marks, dict) else 0
    seq = st.rule_seq
    if not isinstance(seq, int) or not isinstance(mark, int) or seq <= mark:
        return
    recs = [r for r in st.pending or () if isinstance(r.get("rule_seq"), int)]
    recs = [r for r in recs if r["rule_seq"] > mark]
    masked = sum(len(r.get("redactions") or ()) for r in recs)
    committed(tally, sid, seq, {"dispatched": len(recs), "redactions": masked})


def read_all(layout: Layout | None = None) -> dict[str, dict[str, int]]:
    """{rule key: totals} of every rule with counters."""
    folder = (layout or Layout()).counters_dir()
    out: dict[str, dict[str, int]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in sorted(names):
        if not name.endswith(".json"):
            continue
        data = read_state(os.path.join(folder, name))
        if not isinstance(data, dict):
            continue
        try:  # `marks` is committed()'s bookkeeping, "health" a mapping of its own
            out[name[:-5]] = {k: int(v) for k, v in data.items() if k not in ("marks", "health")}
        except (TypeError, ValueError):
            continue
    return out


def read_health(layout: Layout | None = None) -> dict[str, dict[str, Any]]:
    """{rule key: health} of every rule whose file holds one (the module docstring)."""
    folder = (layout or Layout()).counters_dir()
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        data = read_state(os.path.join(folder, name)) if name.endswith(".json") else None
        if isinstance(data, dict) and isinstance(data.get("health"), dict):
            out[name[:-5]] = data["health"]
    return out


def _marked(health: dict[str, Any], marks: dict[str, Any]) -> dict[str, Any]:
    """`health` with a flush's marks applied. Several dispatchers flush one rule's file
    in any order, so each mark is judged by its time, not by when it arrived: a failure
    older than the latest delivery does not start a failing spell."""
    h = dict(health)
    ok = int(marks.get("delivered_ns", 0))
    if ok > int(h.get("last_delivered_ns", 0)):
        h["last_delivered_ns"] = ok
        if ok >= int(h.get("failing_since_ns", 0)):
            h["failing_since_ns"] = 0
    bad = int(marks.get("error_ns", 0))
    if bad > int(h.get("last_error_ns", 0)):
        h["last_error_ns"], h["last_error"] = bad, str(marks.get("error", ""))[:200]
    first = int(marks.get("first_error_ns", 0))
    if first > int(h.get("last_delivered_ns", 0)) and not int(h.get("failing_since_ns", 0)):
        h["failing_since_ns"] = first
    return h


class Tally:
    """In-memory deltas for one rule, flushed to disk by its owner."""

    def __init__(self, rid: str, layout: Layout | None = None):
        self.rid = rid
        self.layout = layout
        self._lock = _thread.allocate_lock()
        self._deltas: dict[str, int] = {}
        self._marks: dict[str, Any] = {}

    def count(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._deltas[kind] = self._deltas.get(kind, 0) + n

    def delivered(self, at_ns: int) -> None:
        """A consumer accepted an attempt at `at_ns` (the health's last delivery)."""
        with self._lock:
            self._marks["delivered_ns"] = at_ns

    def failed(self, at_ns: int, detail: str) -> None:
        """An attempt failed at `at_ns`; `detail` is content-free (the outcome's)."""
        with self._lock:
            self._marks["error_ns"], self._marks["error"] = at_ns, detail
            self._marks.setdefault("first_error_ns", at_ns)

    def flush(self) -> None:
        with self._lock:
            deltas, self._deltas = self._deltas, {}
            marks, self._marks = self._marks, {}
        try:
            add(self.rid, deltas, self.layout, marks)
        except OSError:
            with self._lock:  # kept for the next flush, with what was counted since
                for kind, n in deltas.items():
                    self._deltas[kind] = self._deltas.get(kind, 0) + n
                self._marks = {**marks, **self._marks}
