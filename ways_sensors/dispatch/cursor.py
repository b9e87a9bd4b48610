"""One rule's cursor into the session's journal: what it holds, and the batch being
collected that becomes it (the worker, worker.py, owns both).

A cursor (kept in the session's cursor log, one line per change, with its pending batch
in a file of its own while it is in flight: cursorlog.py has those formats and why
there is one log rather than a file per rule) is a state.cursorstate.Cursor, on disk
one JSON object:

    {"rule_seq": <the last number given>, "hash": <the chain head, 64 hex>,
     "segment": "0000000001.seg", "offset": <bytes>, "active": true,
     "tree"?: <chain: true only, evidence/sealer.py>,
     "finished_as": null | <16 hex: how the pending records were finished>,
     "pending": null | [<record>, ...]}

`pending` is the batch being delivered: each record exactly as the consumer receives
it (numbered, masked, chained), in order; its last record carries `rule_seq` and, with
`chain: true`, `hash`. On disk it is the batch file (`encode_batch`: a JSON line per
record; a record holding a lone surrogate is written ASCII-escaped there, so the file
is always UTF-8 and parses back to the same record). `finished_as` is the fingerprint
of the rule's `fields`, `redact` and `chain` the batch was finished under: a rule
changed since then finishes it again before it goes out (refinish.py). A cursor file of
an older version (`cursors/<key>.json`, the whole object above, `pending` inline, one
record as an object before batching) is migrated into the log when the dispatcher
opens it (cursorlog.py).

Group commit: a batch is moved past, numbered, chained and made pending in one step
(its batch file written whole, then the one log line naming it), then delivered, and
`pending` is cleared by a second line once the rule is done with it (accepted;
best_effort: its one attempt made; permanent: parked); its file goes after that line.
What survives a SIGKILL: a kill before the first line changes nothing (the next
dispatcher collects and numbers the same records again; the batch file, if written,
is an orphan it removes); a kill after it re-sends the whole batch with the same
`rule_seq`s and hashes, so a consumer may hold part or all of a batch twice (`ways
sensors verify` skips such duplicates). A move past records this rule does not take is
saved lazily (worker.POSITION_EVERY): a kill loses only the time to skip them again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..pipeline.chain import GENESIS
from ..pipeline.stages import dumps
from ..state.cursorstate import Cursor


def load_cursor(
    st: dict[str, Any] | None,
    end: tuple[str, int],
    ledger_head: Callable[[], tuple[int, str] | None],
) -> Cursor:
    """The cursor a worker starts from: `st` as read from the log (None when there is
    none), `end` the journal's committed end, `ledger_head` the rule's head in a removed
    session folder's ledger. A new rule (no cursor) goes on from that head and sees the
    records from now on; a re-enabled one (inactive) does not see what it missed."""
    if st is None:
        rule_seq, h = ledger_head() or (0, GENESIS)
        return Cursor(segment=end[0], offset=end[1], rule_seq=rule_seq, hash=h)
    cur = Cursor.from_json(st)
    if not cur.active:
        cur.segment, cur.offset = end
    cur.active = True
    return cur


def _utf8_line(record: dict[str, Any], line: bytes) -> bytes:
    """`line` when it is UTF-8; else (a lone surrogate passed through) the record
    ASCII-escaped, which parses back to the same record."""
    try:
        line.decode("utf-8")
        return line
    except UnicodeDecodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str).encode()


def encode_batch(recs: list[dict[str, Any]], lines: list[bytes] | None) -> bytes:
    """A pending batch's file (cursorlog.py): a JSON line per record, always UTF-8;
    `lines` are the records' JSON when already encoded."""
    if lines is None or len(lines) != len(recs):
        lines = [dumps(r) for r in recs]
    body = b"\n".join(lines) + b"\n"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        body = b"".join(_utf8_line(r, ln) + b"\n" for r, ln in zip(recs, lines, strict=True))
    return body


class Batch:
    """A batch being collected: what the cursor becomes once it is committed."""

    def __init__(self, st: Cursor) -> None:
        self.segment = st.segment
        self.offset = st.offset
        self.rule_seq = st.rule_seq
        self.hash = st.hash
        self.records: list[dict[str, Any]] = []
        self.lines: list[bytes] = []
        self.size = 0
        self.drops = 0
        self.numbered = 0  # records numbered here (not a blocking rule's, by the hook)
        self.redactions = 0
        self.moved = False

    def add(self, record: dict[str, Any], line: bytes) -> None:
        self.records.append(record)
        self.lines.append(line)
        self.size += len(line)
