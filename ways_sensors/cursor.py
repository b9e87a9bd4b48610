"""One rule's cursor into the session's journal: its file's format, and the batch being
collected that becomes it (the worker, worker.py, owns both).

The cursor file (layout.py `cursor`; 0600, replaced atomically through secure.py: a
temporary file renamed over it), one JSON object:

    {"active": true, "segment": "0000000001.seg", "offset": <bytes>,
     "rule_seq": <the last number given>, "hash": <the chain head, 64 hex>,
     "finished_as": null | <16 hex: how the pending records were finished>,
     "pending": null | [<record>, ...]}

`pending` is the batch being delivered: each record exactly as the consumer receives
it (numbered, masked, chained), in order; its last record carries `rule_seq` and, with
`chain: true`, `hash`. A record holding a lone surrogate is written ASCII-escaped there,
so the file is always UTF-8 and parses back to the same record. `finished_as` is the
fingerprint of the rule's `fields`, `redact` and `chain` the batch was finished under: a
rule changed since then finishes it again before it goes out (refinish.py). A cursor
written before batching holds one record (an object) as `pending`, read as a batch of one.

Group commit: a batch is moved past, numbered, chained and made pending in one write,
then delivered, and `pending` is cleared in a second write once the rule is done with
it (accepted; best_effort: its one attempt made; permanent: parked). What survives a
SIGKILL: a kill before the first write changes nothing (the next dispatcher collects
and numbers the same records again); a kill after it re-sends the whole batch with the
same `rule_seq`s and hashes, so a consumer may hold part or all of a batch twice
(`ways sensors verify` skips such duplicates). A move past records this rule does not
take is saved lazily (worker.POSITION_EVERY): a kill loses only the time to skip them
again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .chain import GENESIS
from .pipeline import dumps


def load_cursor(
    st: Any, end: tuple[str, int], ledger_head: Callable[[], tuple[int, str] | None]
) -> dict[str, Any]:
    """The cursor a worker starts from: `st` as read from the file (None when there is
    none), `end` the journal's committed end, `ledger_head` the rule's head in a removed
    session folder's ledger. A new rule (no cursor) goes on from that head and sees the
    records from now on; a re-enabled one (inactive) does not see what it missed."""
    if not isinstance(st, dict):
        rule_seq, h = ledger_head() or (0, GENESIS)
        st = {"rule_seq": rule_seq, "hash": h, "pending": None}
        st["segment"], st["offset"] = end
    elif not st.get("active", True):
        st["segment"], st["offset"] = end
    pending = st.get("pending")
    if isinstance(pending, dict):  # a cursor from before batching: a batch of one
        st["pending"] = [pending]
    elif not (isinstance(pending, list) and pending):
        st["pending"] = None
    st["active"] = True
    out: dict[str, Any] = st
    return out


def _utf8_line(record: dict[str, Any], line: bytes) -> bytes:
    """`line` when it is UTF-8; else (a lone surrogate passed through) the record
    ASCII-escaped, which parses back to the same record."""
    try:
        line.decode("utf-8")
        return line
    except UnicodeDecodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str).encode()


def encode_cursor(st: dict[str, Any], lines: list[bytes] | None) -> bytes:
    """The cursor file's bytes; `lines` are the pending records' JSON, already encoded."""
    head = {k: v for k, v in st.items() if k != "pending"}
    empty = json.dumps({**head, "pending": None}, separators=(",", ":")).encode()
    recs = st.get("pending")
    if not recs:
        return empty
    if lines is None or len(lines) != len(recs):
        lines = [dumps(r) for r in recs]
    body = b",".join(lines)
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        body = b",".join(_utf8_line(r, ln) for r, ln in zip(recs, lines, strict=True))
    return empty[: -len(b"null}")] + b"[" + body + b"]}"  # "pending" is the last key


class Batch:
    """A batch being collected: what the cursor becomes once it is committed."""

    def __init__(self, st: dict[str, Any]) -> None:
        self.segment: str = st["segment"]
        self.offset: int = st["offset"]
        self.rule_seq: int = st["rule_seq"]
        self.hash: str = st["hash"]
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
