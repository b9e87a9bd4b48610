"""Checking a chained file: which link broke first, and how (SPEC section 8).

A file may hold several chains (one per rule and session); each is checked on its own,
in file order. For each record: its hash must be sha256(prev + "\\n" + canonical record);
its `prev` must be the hash of the record before it; `rule_seq` must go up by one.
Records an at_least_once consumer received twice are identical (same rule_seq, same
hash) and are skipped. The first anomaly is classified:

    edited      the record's hash does not match its content
    inserted    a record that does not belong: it claims a rule_seq already taken, or
                its prev does not link although its rule_seq is the expected one
    reordered   an earlier rule_seq after a later one, or a jump whose missing record
                comes later in the file
    deleted     rule_seq jumps and the missing records are nowhere in the file
    truncated   (with --rule) the stored chain head is past the file's last record

Only the dispatcher's own `queue_cap` drops leave a gap with an intact link: reported
as a gap, not a break.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from . import chain, roots
from .session import read_json


@dataclass
class Break:
    kind: str
    line: int
    rule_seq: int | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "line": self.line,
            "rule_seq": self.rule_seq,
            "message": self.message,
        }


@dataclass
class Chain:
    sensor: str
    rule: str
    session_id: str
    records: int = 0
    first: int | None = None
    last: int | None = None
    last_hash: str = chain.GENESIS
    gaps: list[tuple[int, int]] = field(default_factory=list)
    duplicates: int = 0
    brk: Break | None = None
    head: dict[str, Any] | None = None
    seen: dict[int, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "sensor": self.sensor,
            "rule": self.rule,
            "session_id": self.session_id,
            "records": self.records,
            "first": self.first,
            "last": self.last,
            "duplicates": self.duplicates,
            "gaps": [list(g) for g in self.gaps],
            "head": self.head,
            "break": self.brk.as_json() if self.brk else None,
        }


def stored_head(sensor: str, rule: str, session_id: str) -> dict[str, Any] | None:
    """The rule's chain head for a session: its live cursor, else the ledger."""
    base = os.path.join(roots.state_root(), "sessions", session_id, "cursors", f"{sensor}.{rule}")
    head = read_json(base + ".head")
    if isinstance(head, dict):
        return {"rule_seq": head["rule_seq"], "hash": head["hash"], "in_flight": False}
    cur = read_json(base + ".json")
    if isinstance(cur, dict) and cur.get("rule_seq"):
        return {
            "rule_seq": cur["rule_seq"],
            "hash": cur["hash"],
            "in_flight": cur.get("pending") is not None,
        }
    ledger = read_json(os.path.join(roots.state_root(), "ledger", session_id + ".json"), {})
    entry = (ledger or {}).get("rules", {}).get(f"{sensor}/{rule}")
    if isinstance(entry, list) and len(entry) == 2:
        return {"rule_seq": entry[0], "hash": entry[1], "in_flight": False}
    return None


def _read(path: str) -> list[tuple[int, dict[str, Any] | None]]:
    out = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            out.append((n, obj if isinstance(obj, dict) else None))
    return out


def verify(path: str, rule: str | None = None) -> tuple[list[Chain], Break | None, int]:
    """(chains, the first break in file order, records read)."""
    rows = _read(path)
    chains: dict[tuple[str, str, str], Chain] = {}
    first_break: Break | None = None

    def fail(c: Chain, b: Break) -> None:
        nonlocal first_break
        c.brk = b
        if first_break is None or b.line < first_break.line:
            first_break = b

    sensor_f, _, rule_f = (rule or "").partition("/")
    positions: dict[tuple[str, str, str], dict[int, int]] = {}
    parsed = []
    for n, rec in rows:
        if rec is None or not isinstance(rec.get("chain"), dict):
            b = Break("edited", n, None, f"line {n} is not a chained record")
            if first_break is None:
                first_break = b
            continue
        key = (str(rec.get("sensor")), str(rec.get("rule")), str(rec.get("session_id")))
        if rule and (key[0], key[1]) != (sensor_f, rule_f):
            continue
        parsed.append((n, rec, key))
        positions.setdefault(key, {}).setdefault(rec.get("rule_seq"), n)
    for n, rec, key in parsed:
        c = chains.get(key)
        if c is None:
            c = chains[key] = Chain(*key)
        if c.brk:
            continue
        seq = rec.get("rule_seq")
        link = rec["chain"]
        c.records += 1
        if not isinstance(seq, int) or chain.link(str(link.get("prev")), rec) != link.get("hash"):
            fail(
                c,
                Break(
                    "edited",
                    n,
                    seq if isinstance(seq, int) else None,
                    f"line {n} (rule_seq {seq}) was changed after it was chained",
                ),
            )
            continue
        expected = (c.last or 0) + 1
        if c.seen.get(seq) == link["hash"]:
            c.duplicates += 1  # at_least_once delivered it twice: same record
            continue
        if seq in c.seen:
            fail(
                c,
                Break(
                    "inserted",
                    n,
                    seq,
                    f"line {n} claims rule_seq {seq}, which line "
                    f"{positions[key][seq]} already holds",
                ),
            )
            continue
        if seq < expected:
            fail(
                c,
                Break(
                    "reordered", n, seq, f"line {n} holds rule_seq {seq} after rule_seq {c.last}"
                ),
            )
            continue
        if seq == expected:
            if link["prev"] != c.last_hash:
                fail(
                    c,
                    Break(
                        "inserted",
                        n,
                        seq,
                        f"line {n} (rule_seq {seq}) does not link to the record before it",
                    ),
                )
                continue
        else:
            later = [s for s in range(expected, seq) if positions[key].get(s, 0) > n]
            if later:
                fail(
                    c,
                    Break(
                        "reordered",
                        n,
                        seq,
                        f"line {n} holds rule_seq {seq} before rule_seq {later[0]}",
                    ),
                )
                continue
            if link["prev"] != c.last_hash:
                fail(
                    c,
                    Break(
                        "deleted", n, seq, f"rule_seq {expected}..{seq - 1} missing before line {n}"
                    ),
                )
                continue
            c.gaps.append((expected, seq - 1))  # dropped by the dispatcher: link intact
        c.seen[seq] = link["hash"]
        c.first = seq if c.first is None else c.first
        c.last, c.last_hash = seq, link["hash"]
    if rule:
        for c in chains.values():
            c.head = stored_head(c.sensor, c.rule, c.session_id)
            if c.brk or not c.head:
                continue
            owed = c.head["rule_seq"] - (1 if c.head.get("in_flight") else 0)
            if (c.last or 0) < owed:
                b = Break(
                    "truncated",
                    rows[-1][0] if rows else 0,
                    c.last,
                    f"the file ends at rule_seq {c.last} of session {c.session_id}; "
                    f"the stored head is at {c.head['rule_seq']}",
                )
                fail(c, b)
            elif c.last == c.head["rule_seq"] and c.last_hash != c.head["hash"]:
                fail(
                    c,
                    Break(
                        "edited",
                        rows[-1][0],
                        c.last,
                        "the last record's hash is not the stored head",
                    ),
                )
    return list(chains.values()), first_break, len(rows)
