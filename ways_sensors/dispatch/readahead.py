"""A worker's read-ahead of the journal: the committed entries after its cursor, ready to
be taken into a batch, with best_effort's `queue_cap` applied as they are read.

The buffer holds `(segment, end offset, record | None | "drop")`, newest first (a
worker pops the oldest from the end, and pushes one back when a held record ends its
batch). `refill` reads the next committed run of entries from `at`, going on to the
next segment at the end of a finished one. A best_effort rule keeps at most its
`queue_cap` of a run's matching records: the oldest beyond it become `"drop"` (the
worker numbers the gap and counts it), logged content-free once per run. `rewind`
forgets what was read: the next refill reads again from the worker's cursor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config.rules import LoadedRule
from ..pipeline.stages import match
from .journal import Journal

Entry = tuple[str, int, Any]


class ReadAhead:
    def __init__(
        self,
        journal: Journal,
        rule: LoadedRule,
        capped: bool,
        log: Callable[..., None],
    ) -> None:
        self.journal = journal
        self.rule = rule
        self.capped = capped and not rule.at_least_once  # queue_cap applies
        self.log = log  # the worker's content-free events.log line
        self.buffer: list[Entry] = []
        self.at = ("", 0)  # where the next read starts

    def rewind(self, segment: str, offset: int) -> None:
        self.buffer = []
        self.at = (segment, offset)

    def refill(self) -> bool:
        """Read the committed records after `at` into the buffer; False if none."""
        while True:
            seg, offset = self.at
            batch = self.journal.read_from((seg, offset))
            if batch is None:  # the end of a finished segment: go on to the next
                nxt = self.journal.next_segment(seg)
                if nxt is None:
                    return False
                self.at = (nxt, 0)
                continue
            if not batch:
                return False
            entries: list[Entry] = [(seg, end, rec) for end, rec in batch]
            if self.capped:
                self._cap(seg, entries)
            self.at = (seg, entries[-1][1])
            entries.reverse()  # pop() from the end is the oldest
            self.buffer = entries
            return True

    def _cap(self, seg: str, entries: list[Entry]) -> None:
        cap = self.rule.spec.queue_cap
        matching = [
            i for i, (_, _, rec) in enumerate(entries) if rec is not None and match(self.rule, rec)
        ]
        drop = max(0, len(matching) - cap)
        if drop:
            for i in matching[:drop]:
                entries[i] = (seg, entries[i][1], "drop")
            self.log("dispatch.drop", count=drop, cap=cap)
