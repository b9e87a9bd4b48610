"""What each rule still owes its consumer: records built for it and not yet settled.

A record is owed from the moment the dispatcher commits it to a session's journal
until the rule's worker is done with it (accepted, parked, or given up). Read here as
another process sees it, taking no lock: per session folder, the rule's pending batch
(cursorread.py: numbered, in flight) and the committed journal past the rule's cursor
(journal.py) that the rule takes (pipeline.match; a blocking rule takes only the
hook's failed dispatches that name it). The oldest owed record's `timestamp` is its
age. Records still in the spool (not built yet) are not counted: the build runs
within milliseconds of a hook event while a dispatcher lives, and a session with no
dispatcher is in `pending_sessions`.

Bounded: at most SCAN_BYTES of journal are read per session; past it the count is a
floor (`complete` false), so a backlog of gigabytes never makes `ways status` slow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..config.rules import LoadedRule
from ..dispatch.buildstate import BuildCursor
from ..dispatch.journal import Journal
from ..pipeline.stages import match
from ..state import cursorstate
from ..state.layout import Layout, read_state

SCAN_BYTES = 64 << 20  # journal bytes read per session before the count is a floor


@dataclass
class Owed:
    """One rule's records owed across sessions; `oldest` is epoch seconds (None: none)."""

    records: int = 0
    oldest: float | None = None
    sessions: int = 0
    complete: bool = True

    def add(self, n: int, ts: float | None) -> None:
        self.records += n
        if ts is not None and (self.oldest is None or ts < self.oldest):
            self.oldest = ts


def epoch(record: Any) -> float | None:
    """A record's `timestamp` (ISO UTC, as records.py writes it) in epoch seconds."""
    ts = record.get("timestamp") if isinstance(record, dict) else None
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _takes(rule: LoadedRule, record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if rule.spec.mode == "blocking":  # worker.py: only the hook's failed dispatches
        return record.get("retry_for") == rule.key
    return match(rule, record)


def _pending(folder: str, key: str) -> tuple[int, float | None, tuple[str, int] | None]:
    """(records in the rule's in-flight batch, the first one's time, its cursor's position)."""
    st = cursorstate.read(folder, key)
    if st is None or not st.active:
        return 0, None, None
    pending = [r for r in st.pending or () if r.get("section") != "checkpoint"]
    return len(pending), (epoch(pending[0]) if pending else None), st.position


def scan(rules: list[LoadedRule], layout: Layout | None = None) -> dict[str, Owed]:
    """{rule key: Owed} for `rules`, over every session folder in the state root."""
    layout = layout or Layout()
    out = {r.key: Owed() for r in rules}
    for sid in layout.sessions():
        build = BuildCursor.parse(read_state(layout.build_cursor(sid)))
        if build is None:
            continue
        journal = Journal(layout.journal_dir(sid), sid)
        journal.end = build.journal
        cursors = layout.cursors_dir(sid)
        for rule in rules:
            n, first, at = _pending(cursors, rule.key)
            if at is None:
                continue  # no cursor: the rule starts at the journal's end
            more, ts, complete = _journal_after(journal, rule, at)
            owed = out[rule.key]
            owed.add(n + more, first if first is not None else ts)
            owed.sessions += bool(n + more)
            owed.complete = owed.complete and complete
    return out


def _journal_after(
    journal: Journal, rule: LoadedRule, at: tuple[str, int]
) -> tuple[int, float | None, bool]:
    """(records the rule takes after `at`, the first one's time, whether all were read)."""
    count, first, read = 0, None, 0
    seg, offset = at
    while True:
        entries = journal.read_from((seg, offset))
        if entries is None:  # the end of a finished segment: on to the next
            nxt = journal.next_segment(seg)
            if nxt is None:
                return count, first, True
            seg, offset = nxt, 0
            continue
        if not entries:
            return count, first, True
        for _, rec in entries:
            if _takes(rule, rec):
                count += 1
                first = first if first is not None else epoch(rec)
        read += entries[-1][0] - offset
        offset = entries[-1][0]
        if read > SCAN_BYTES:
            return count, first, False
