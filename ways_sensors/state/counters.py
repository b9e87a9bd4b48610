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

KINDS = (
    "dispatched",
    "delivered",
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


def add(rid: str, deltas: dict[str, int], layout: Layout | None = None) -> None:
    """Add `deltas` to the rule's totals, atomically with respect to other writers."""
    deltas = {k: v for k, v in deltas.items() if v}
    if not deltas:
        return
    layout = layout or Layout()
    secure.ensure_private_dir(layout.counters_dir(), layout.root)

    def change(totals: dict[str, Any]) -> bool:
        for k, v in deltas.items():
            totals[k] = int(totals.get(k, 0)) + v
        return True

    update_json_locked(layout.counters(rid), change)


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
        try:
            out[name[:-5]] = {k: int(v) for k, v in data.items()}
        except (TypeError, ValueError):
            continue
    return out


class Tally:
    """In-memory deltas for one rule, flushed to disk by its owner."""

    def __init__(self, rid: str, layout: Layout | None = None):
        self.rid = rid
        self.layout = layout
        self._lock = _thread.allocate_lock()
        self._deltas: dict[str, int] = {}

    def count(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._deltas[kind] = self._deltas.get(kind, 0) + n

    def flush(self) -> None:
        with self._lock:
            deltas, self._deltas = self._deltas, {}
        try:
            add(self.rid, deltas, self.layout)
        except OSError:
            with self._lock:  # kept for the next flush, with what was counted since
                for kind, n in deltas.items():
                    self._deltas[kind] = self._deltas.get(kind, 0) + n
