"""One rule's cursor, typed: what a line of the session's cursor log holds (cursorlog.py
has the log's format, dispatch/cursor.py what each field means and how the worker moves
it), and the pending batch that rides with it.

`from_json` reads a line as any version wrote it (an older `.json` cursor too); `as_json`
writes the fields in the order a worker's committed line has always had them ("rule"
and "batch" are the log's, around them), so a log written before the cursor was typed
loads as it was, and such a line read back and saved again is the same bytes (a line
that never had `finished_as` gains it as null, which every reader took it for). Not on
the blocking path: the hook's imports (dispatch/blocking.py) reach cursorlog.py, never
this module.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from . import cursorread


@dataclass
class Cursor:
    segment: str  # the journal segment of the next record to read
    offset: int  # its byte offset in that segment
    rule_seq: int  # the last number given
    hash: str  # the chain head (64 hex)
    active: bool = True  # false once the rule is gone: a re-enabled rule starts at the end
    tree: dict[str, Any] | None = None  # chain: true only (evidence/sealer.py owns it)
    finished_as: str | None = None  # how `pending` was finished (dispatch/refinish.py)
    pending: list[dict[str, Any]] | None = None  # the batch in flight; never empty
    unreadable: bool = False  # its batch file could not be read (never written)
    batch: str | None = None  # the log's batch token, for a reader that did not read it

    @classmethod
    def from_json(cls, st: dict[str, Any]) -> Cursor:
        """A cursor as cursorlog.load gives it (a dict with `pending` read); a cursor
        from before batching held its one pending record as an object."""
        pending = st.get("pending")
        if isinstance(pending, dict):
            pending = [pending]
        elif not (isinstance(pending, list) and pending):
            pending = None
        tree = st.get("tree")
        return cls(
            segment=st["segment"],
            offset=st["offset"],
            rule_seq=st["rule_seq"],
            hash=st["hash"],
            active=bool(st.get("active", True)),
            tree=tree if isinstance(tree, dict) else None,
            finished_as=st.get("finished_as"),
            pending=pending,
            unreadable=bool(st.get("unreadable", False)),
        )

    @classmethod
    def parse(cls, st: object) -> Cursor | None:
        """What a reader in another process found for a rule: its cursor, or None when
        it is not one (a hand edit, a line no version wrote)."""
        if not isinstance(st, dict):
            return None
        try:
            c = cls.from_json(st)
        except (KeyError, TypeError):
            return None
        # read_all leaves the batch file unread: its token says one is in flight (never
        # on a worker's own cursor, whose `pending` is read)
        c.batch = st.get("batch") if isinstance(st.get("batch"), str) else None
        typed = isinstance(c.segment, str) and type(c.offset) is int  # never a bool
        return c if typed and type(c.rule_seq) is int and isinstance(c.hash, str) else None

    @property
    def in_flight(self) -> bool:
        """A batch in flight: one the log names, or one read with the cursor."""
        return bool(self.batch or self.pending)

    def as_json(self) -> dict[str, Any]:
        """The line's fields with `pending` (cursorlog.save writes it to a batch file, and
        knows a batch it wrote already by this very list)."""
        out: dict[str, Any] = {
            "rule_seq": self.rule_seq,
            "hash": self.hash,
            "segment": self.segment,
            "offset": self.offset,
            "active": self.active,
        }
        if self.tree is not None:
            out["tree"] = self.tree
        out["finished_as"] = self.finished_as
        out["pending"] = self.pending
        return out

    def fork(self) -> Cursor:
        """A copy to make the next cursor in: until it is saved the worker keeps this one,
        so a failed save (a full disk) leaves position, chain head and the tree's size as
        they were (one commit point: a tree behind its cursor made an untouched file look
        edited to `verify --key`). `tree` is the one nested dict changed in place
        (evidence/sealer.py)."""
        tree = self.tree
        if tree is None:
            return replace(self)
        return replace(self, tree={**tree, "witness": dict(tree.get("witness") or {})})

    @property
    def position(self) -> tuple[str, int]:
        return self.segment, self.offset


def read(folder: str, key: str) -> Cursor | None:
    """One rule's cursor in a session's `cursors/` folder as another process reads it,
    its pending batch read (None: no cursor, or one that is not a cursor)."""
    return Cursor.parse(cursorread.read_cursor(folder, key))


def read_all(folder: str, strict: bool = False) -> dict[str, Cursor | None]:
    """Every rule's cursor in the folder, pending batches not read ({key: None} for one
    that is not a cursor); `strict`: cursorread.read_states's."""
    return {k: Cursor.parse(v) for k, v in cursorread.read_states(folder, strict).items()}
