"""Checking the links of every chain in one file, with the records other files hold.

A chain (one rule, one session) may be spread over several files: a `{date}` path puts
each record in the file of its own date, so a session that crosses midnight, or a
record recovered from the transcript with an earlier time, continues in another file.
`Others` holds the sealed records of the other files looked at; a record whose
predecessor (by rule_seq) lives in another file is checked against it there, so every
record's link is checked once, wherever it lies, and a file whose chain goes on
elsewhere is noted ("continues in FILE"), never reported as a break.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from ..pipeline import chain
from .breaks import Break
from .read import Entry, Key


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
    lines: dict[int, int] = field(default_factory=dict)
    continues_from: list[str] = field(default_factory=list)  # files holding earlier links
    continues_in: list[str] = field(default_factory=list)  # files holding later links
    restarts: list[int] = field(default_factory=list)  # lines where rule_seq 1 came again

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
            "continues_from": list(self.continues_from),
            "continues_in": list(self.continues_in),
            "restarts": list(self.restarts),
        }


class Others:
    """The sealed records other files hold, by chain and rule_seq (first one kept)."""

    def __init__(self, entries: list[Entry] | None = None) -> None:
        self._at: dict[Key, dict[int, list[Entry]]] = {}
        self._seqs: dict[Key, list[int]] = {}
        for e in entries or []:
            self.add(e)

    def add(self, e: Entry) -> None:
        if e.seq is None or not e.sealed:
            return  # its own file's check reports it
        slot = self._at.setdefault(e.key, {})
        if e.seq not in slot:
            bisect.insort(self._seqs.setdefault(e.key, []), e.seq)
        slot.setdefault(e.seq, []).append(e)

    def __bool__(self) -> bool:
        return bool(self._at)

    def at(self, key: Key, seq: int, path: str) -> Entry | None:
        return next((e for e in self._at.get(key, {}).get(seq, []) if e.path != path), None)

    def _near(self, key: Key, seq: int, path: str, later: bool) -> Entry | None:
        seqs = self._seqs.get(key, [])
        if later:
            order = seqs[bisect.bisect_right(seqs, seq) :]
        else:
            order = seqs[: bisect.bisect_left(seqs, seq)][::-1]
        for s in order:
            got = self.at(key, s, path)
            if got is not None:
                return got
        return None

    def before(self, key: Key, seq: int, path: str) -> Entry | None:
        """The record with the highest rule_seq below `seq` in another file."""
        return self._near(key, seq, path, False)

    def after(self, key: Key, seq: int, path: str) -> Entry | None:
        """The record with the lowest rule_seq above `seq` in another file."""
        return self._near(key, seq, path, True)


def _restart(c: Chain, line: int) -> None:
    """The chain starts again at rule_seq 1 from the genesis hash: a session resumed
    after its ledger entry was pruned (retention.LEDGER_MAX) numbers its records anew
    in the same file. Its earlier records were checked up to here; the new ones are
    checked as a chain of their own, and the restart is reported, not a break."""
    c.restarts.append(line)
    c.seen, c.lines = {}, {}
    c.last, c.last_hash = None, chain.GENESIS


def _note(where: list[str], path: str) -> None:
    if path not in where:
        where.append(path)


def check(entries: list[Entry], others: Others | None = None, path: str = "") -> dict[Key, Chain]:
    """Every chain's own links in one file (`entries`, in file order), taking the
    records `others` hold in other files as the ones around them."""
    others = others or Others()
    chains: dict[Key, Chain] = {}
    positions: dict[Key, dict[int | None, int]] = {}
    for e in entries:
        positions.setdefault(e.key, {}).setdefault(e.seq, e.line)
    for e in entries:
        key, n, seq = e.key, e.line, e.seq
        c = chains.get(key)
        if c is None:
            c = chains[key] = Chain(*key)
            seed = others.before(key, seq, path) if seq is not None else None
            if seed is not None:  # the chain began in another file
                c.last, c.last_hash = seed.seq, seed.hash
                _note(c.continues_from, seed.path)
        if c.brk:
            continue
        c.records += 1
        sid = key[2]
        if seq is None or not e.sealed:
            msg = f"line {n} (rule_seq {seq}) was changed after it was chained"
            c.brk = Break("edited", msg, line=n, rule_seq=seq, session_id=sid)
            continue
        if c.seen.get(seq) == e.hash:
            c.duplicates += 1  # at_least_once delivered it twice: same record
            continue
        if seq == 1 and e.prev == chain.GENESIS and c.last is not None:
            _restart(c, n)  # resumed after its ledger entry was pruned: a new chain
        expected = (c.last or 0) + 1
        if seq in c.seen:
            held = positions[key][seq]
            msg = f"line {n} claims rule_seq {seq}, which line {held} already holds"
            c.brk = Break("inserted", msg, line=n, rule_seq=seq, session_id=sid)
            continue
        if seq < expected:
            msg = f"line {n} holds rule_seq {seq} after rule_seq {c.last}"
            c.brk = Break("reordered", msg, line=n, rule_seq=seq, session_id=sid)
            continue
        if seq == expected:
            if e.prev != c.last_hash:
                msg = f"line {n} (rule_seq {seq}) does not link to the record before it"
                c.brk = Break("inserted", msg, line=n, rule_seq=seq, session_id=sid)
                continue
        else:
            later = _later(positions[key], expected, seq, n)
            if later is not None:
                msg = f"line {n} holds rule_seq {seq} before rule_seq {later}"
                c.brk = Break("reordered", msg, line=n, rule_seq=seq, session_id=sid)
                continue
            elsewhere = others.before(key, seq, path)
            if elsewhere is not None and elsewhere.seq is not None and elsewhere.seq >= expected:
                # the records in between are in another file: link to the last of them
                if e.prev != elsewhere.hash:
                    msg = (
                        f"line {n} (rule_seq {seq}) does not link to rule_seq "
                        f"{elsewhere.seq} in {elsewhere.path}:{elsewhere.line}"
                    )
                    c.brk = Break("inserted", msg, line=n, rule_seq=seq, session_id=sid)
                    continue
                _note(c.continues_in, elsewhere.path)
                if elsewhere.seq < seq - 1:
                    c.gaps.append((elsewhere.seq + 1, seq - 1))
            elif e.prev != c.last_hash:
                msg = f"rule_seq {expected}..{seq - 1} missing before line {n}"
                c.brk = Break("deleted", msg, line=n, rule_seq=seq, session_id=sid)
                continue
            else:
                c.gaps.append((expected, seq - 1))  # dropped by the dispatcher: link intact
        c.seen[seq] = e.hash
        c.lines[seq] = n
        c.first = seq if c.first is None else c.first
        c.last, c.last_hash = seq, e.hash
    for key, c in chains.items():
        if c.brk is None and c.last is not None:
            _end(c, key, others, path, max(c.lines.values(), default=0))
    return chains


def _end(c: Chain, key: Key, others: Others, path: str, line: int) -> None:
    """Does the chain go on in another file after this file's last record?"""
    assert c.last is not None
    nxt = others.after(key, c.last, path)
    if nxt is None:
        return
    if nxt.prev == c.last_hash:
        _note(c.continues_in, nxt.path)
        return
    msg = (
        f"the file ends at rule_seq {c.last} of session {c.session_id}; {nxt.path} goes "
        f"on at rule_seq {nxt.seq}, which does not link to it"
    )
    c.brk = Break("truncated", msg, line=line, rule_seq=c.last, session_id=c.session_id)


def _later(where: dict[int | None, int], low: int, high: int, line: int) -> int | None:
    """The first rule_seq in [low, high) that comes after `line`; bounded by the chain's
    size, since a forged rule_seq can be any number."""
    if high - low <= len(where):
        return next((s for s in range(low, high) if where.get(s, 0) > line), None)
    found = [s for s, n in where.items() if s is not None and low <= s < high and n > line]
    return min(found, default=None)


def ordered(bad: list[Break], chains: list[Chain]) -> list[Break]:
    """Every break in file order (stable: a bad line before a chain's)."""
    found = bad + [c.brk for c in chains if c.brk]
    return sorted(found, key=lambda b: b.line or 0)
