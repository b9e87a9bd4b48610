"""Each rule's delivery health, and whether `ways status` calls it unhealthy.

Read from three places, none of them locked: the health marks the workers keep beside
the counters (counters.py: last delivery, last error and its time, failing since), the
records still owed (owed.py) and the dead-letter files (deadletters.py). A rule is
unhealthy (PROBLEMS) when:

    dead_letters   records are parked in its dead-letter file: a person must replay
                   or drop them (`ways deadletters`)
    failing        it owes records and every attempt since `failing_since` failed,
                   for longer than the threshold (`ways status --threshold`, THRESHOLD_S)

A consumer that failed once and has had nothing to deliver since is not failing: no
record waits on it. `ways status` exits errors.UNHEALTHY while any rule is unhealthy
(after NOT_RECORDING, which outranks it), so cron or a monitoring agent can alert.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..state import counters, events
from ..state.layout import Layout
from .owed import Owed

THRESHOLD_S = 300.0  # how long a consumer may fail while records wait before it is unhealthy


def iso(ns: int) -> str | None:
    return events.iso_utc(ns) if ns else None


@dataclass(frozen=True)
class Health:
    """One rule's delivery health (times are epoch ns, 0 when never)."""

    owed: int
    owed_complete: bool  # False: the count is a floor (owed.SCAN_BYTES)
    oldest_owed_s: float | None  # epoch seconds of the oldest owed record
    last_delivered_ns: int
    last_error_ns: int
    last_error: str
    failing_since_ns: int
    dead_letters: int
    problems: list[str] = field(default_factory=list)

    def age_s(self, now: float) -> float | None:
        """How long the oldest owed record has waited (None: nothing owed)."""
        if not self.owed or self.oldest_owed_s is None:
            return None
        return round(max(0.0, now - self.oldest_owed_s), 1)

    def failing_for_s(self, now: float) -> float | None:
        if not self.failing_since_ns:
            return None
        return round(max(0.0, now - self.failing_since_ns / 1e9), 1)

    def as_json(self, now: float) -> dict[str, Any]:
        return {
            "healthy": not self.problems,
            "problems": list(self.problems),
            "owed": self.owed,
            "owed_complete": self.owed_complete,
            "oldest_owed_age_s": self.age_s(now),
            "last_delivery": iso(self.last_delivered_ns),
            "last_error": self.last_error or None,
            "last_error_at": iso(self.last_error_ns),
            "failing_since": iso(self.failing_since_ns),
            "failing_for_s": self.failing_for_s(now),
            "dead_letters": self.dead_letters,
        }

    def line(self, rule: str, now: float) -> str:
        """The one line `ways status` prints for an unhealthy rule."""
        parts = []
        if "failing" in self.problems:
            parts.append(f"failing for {self.failing_for_s(now):g}s")
        if self.owed:
            floor = "" if self.owed_complete else "at least "
            parts.append(f"{floor}{self.owed} record(s) owed, oldest {self.age_s(now)}s")
        if self.last_error:
            parts.append(f"last error {self.last_error!r} at {iso(self.last_error_ns)}")
        if self.dead_letters:
            parts.append(f"{self.dead_letters} dead letter(s) (`ways deadletters list {rule}`)")
        last = iso(self.last_delivered_ns) or "never"
        return f"UNHEALTHY {rule}: " + "; ".join(parts) + f"; last delivery {last}"


def judge(
    owed: Owed | None,
    marks: dict[str, Any] | None,
    dead: int,
    threshold_s: float = THRESHOLD_S,
    now: float | None = None,
) -> Health:
    """One rule's Health from its owed records, health marks and dead-letter count."""
    now = time.time() if now is None else now
    owed = owed or Owed()
    m = marks or {}

    def num(key: str) -> int:
        try:
            return int(m.get(key) or 0)
        except (TypeError, ValueError):
            return 0

    since = num("failing_since_ns")
    problems = []
    if dead:
        problems.append("dead_letters")
    if owed.records and since and now - since / 1e9 > threshold_s:
        problems.append("failing")
    return Health(
        owed=owed.records,
        owed_complete=owed.complete,
        oldest_owed_s=owed.oldest,
        last_delivered_ns=num("last_delivered_ns"),
        last_error_ns=num("last_error_ns"),
        last_error=str(m.get("last_error") or ""),
        failing_since_ns=since,
        dead_letters=dead,
        problems=problems,
    )


def marks(layout: Layout | None = None) -> dict[str, dict[str, Any]]:
    """{rule key: health marks} (counters.py)."""
    return counters.read_health(layout)
