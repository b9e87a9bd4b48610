"""The build cursor, typed: what `build.json` holds (state/session.py has the file and how
it survives a SIGKILL; build.py moves it and commits it after each journal append).

`from_json` reads the file as any version wrote it (an older one kept Claude Code's
builder state as "tracker", before agents); `as_json` writes the fields in the order
the dispatcher has always written them, so a state root from before the typing loads
as it was and is saved again as the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..agents import DEFAULT


@dataclass
class BuildCursor:
    spool: tuple[str, int]  # the spool position built up to (segment, offset)
    journal: tuple[str, int]  # the journal's committed end (segment, size)
    seq: int  # the last `seq` given
    project: str | None = None  # the first built entry's project
    ended: bool = False  # the session's last built event ended it
    trackers: dict[str, Any] = field(default_factory=dict)  # {agent: its builder's state}
    traceparent: str | None = None  # the client's trace the session joined
    cost: dict[str, Any] | None = None  # the replies priced so far (pricing.Tally.state)

    @classmethod
    def from_json(cls, b: dict[str, Any]) -> BuildCursor:
        trackers = b.get("trackers") or {}
        old = b.get("tracker")  # a build cursor from before agents: Claude Code's
        if old:
            trackers.setdefault(DEFAULT, old)
        seg, off = b["spool"]
        jseg, jsize = b["journal"]
        return cls(
            spool=(seg, off),
            journal=(jseg, jsize),
            seq=int(b["seq"]),
            project=b.get("project"),
            ended=bool(b.get("ended")),
            trackers=trackers,
            traceparent=b.get("traceparent"),
            cost=b.get("cost"),
        )

    @classmethod
    def parse(cls, value: object) -> BuildCursor | None:
        """What a reader in another process (`ways status`, retention) found in
        `build.json`: the build cursor, or None when it is not one (missing, torn, a
        hand edit)."""
        if not isinstance(value, dict):
            return None
        try:
            b = cls.from_json(value)
            b.spool, b.journal = _position(b.spool), _position(b.journal)
        except (KeyError, TypeError, ValueError):
            return None
        return b

    def as_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "spool": list(self.spool),
            "journal": list(self.journal),
            "seq": self.seq,
            "ended": self.ended,
            "trackers": self.trackers,
            "traceparent": self.traceparent,
            "cost": self.cost,
        }


def _position(at: tuple[Any, Any]) -> tuple[str, int]:
    """A (segment, offset) pair of the right types, or a TypeError."""
    seg, off = at
    if not isinstance(seg, str) or type(off) is not int:  # `type`: never a bool
        raise TypeError("not a position")
    return seg, off
