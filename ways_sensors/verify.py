"""Checking a chained file: which link broke first, and how (SPEC section 8).

A file may hold several chains (one per rule and session); each is checked on its own,
in file order. For each record: its hash must be sha256(prev + "\\n" + canonical record);
its `prev` must be the hash of the record before it; `rule_seq` must go up by one.
Records an at_least_once consumer received twice are identical (same rule_seq, same
hash) and are skipped. Each chain's first anomaly is reported, and every line that is
no record, the first in file order first:

    edited      the record's hash does not match its content, or a line is not a chained
                record at all: not JSON, not UTF-8, nested too deeply to parse, or longer
                than LINE_CAP (reported without being read into memory whole)
    inserted    a record that does not belong: it claims a rule_seq already taken, or
                its prev does not link although its rule_seq is the expected one, or it
                comes after the record the stored head names
    reordered   an earlier rule_seq after a later one, or a jump whose missing record
                comes later in the file
    deleted     rule_seq jumps and the missing records are nowhere in the file
    truncated   (with --rule) the stored chain head is past the file's last record
    missing     (with --rule) a session whose head says it wrote here has no record left

Only the dispatcher's own `queue_cap` drops leave a gap with an intact link: reported
as a gap, not a break. Lines are decoded as the dispatcher encodes them (UTF-8 with
lone surrogates passed through).

With --rule, which sessions must be in the file (heads.py says where heads are stored;
a head names no file, so the rule's current `file` path template decides):

* The rule must be in a layer or have a stored head, else UnknownRule (exit 2).
* Every session with records of the rule here is checked against its head: the file
  must end with the record the head names (or, while one is being delivered, the one
  before it), so a cut tail is `truncated`, whatever `rule_seq` drops skipped.
* When the template renders to this file: without `{date}`, every session the path
  names (all sessions with a head that wrote something, when the path has no
  `{session_id}`) must have records here, else `missing`. With `{date}`, a head cannot
  tell which days a session wrote, so an absent session is not reported; but a chain
  may start in the nearest earlier dated file holding the session (its last record
  seeds this file's chain) and go on in the nearest later one (its first record must
  link to this file's last, instead of the head).
* A file holding no record of the rule is `missing` when a session it may belong to
  (the one its path names, or any session when the template does not render to it)
  has a head that wrote something: a file target creates its file by writing to it.

Known limits: heads do not record the project or the path in force when they were
written; after the rule's path changes, or when another project's layer reuses the
rule's name with another path, sessions recorded elsewhere are reported missing from
a shared (not per-session) file. Without --rule a chain must start at rule_seq 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from . import chain, heads
from .hook import MAX_PAYLOAD

# A record is built from one hook payload (at most MAX_PAYLOAD) plus transcript text,
# and masking can lengthen it; no genuine line comes near four payloads.
LINE_CAP = 4 * MAX_PAYLOAD
CHUNK = 1 << 20
Key = tuple[str, str, str]


class UnknownRule(Exception):
    """--rule names a rule no layer defines and no session has a head for."""


@dataclass
class Break:
    kind: str
    line: int
    rule_seq: int | None
    message: str
    session_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "line": self.line,
            "rule_seq": self.rule_seq,
            "message": self.message,
            "session_id": self.session_id,
        }


@dataclass
class Entry:
    """One chained record, reduced to what checking needs (files can be large)."""

    line: int
    key: Key
    seq: int | None  # None when not an integer
    prev: str
    hash: str
    sealed: bool  # its hash matches its content


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


@dataclass
class Report:
    chains: list[Chain]
    breaks: list[Break]  # every break found, in file order
    records: int  # non-blank lines read
    rule: dict[str, Any] | None = None  # what --rule looked at

    @property
    def first(self) -> Break | None:
        return self.breaks[0] if self.breaks else None


# --- reading ------------------------------------------------------------------------


def _lines(f: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes), None for a line over LINE_CAP, which is skipped in chunks."""
    n = 0
    while True:
        line = f.readline(LINE_CAP + 1)
        if not line:
            return
        n += 1
        if len(line) > LINE_CAP and not line.endswith(b"\n"):
            del line
            while True:
                rest = f.readline(CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield n, None
        else:
            yield n, line


def _parse(n: int, line: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        text = line.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None, f"line {n} is not valid UTF-8"
    try:
        obj = json.loads(text)
    except RecursionError:
        return None, f"line {n} is nested too deeply to be a record"
    except ValueError:
        obj = None
    if not isinstance(obj, dict) or not isinstance(obj.get("chain"), dict):
        return None, f"line {n} is not a chained record"
    return obj, ""


def _text(value: Any) -> str:
    """A field as text; a nested value as its type only (its repr could recurse)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    return f"<{type(value).__name__}>"


def scan(path: str, want: Callable[[Key], bool] | None) -> tuple[list[Entry], list[Break], int]:
    """(records `want` keeps, breaks of lines that are no records, non-blank lines)."""
    entries: list[Entry] = []
    bad: list[Break] = []
    count = 0
    with open(path, "rb") as f:
        for n, line in _lines(f):
            if line is not None and not line.strip():
                continue
            count += 1
            if line is None:
                bad.append(Break("edited", n, None, f"line {n} is over {LINE_CAP >> 20} MiB"))
                continue
            rec, why = _parse(n, line)
            if rec is None:
                bad.append(Break("edited", n, None, why))
                continue
            key = (_text(rec.get("sensor")), _text(rec.get("rule")), _text(rec.get("session_id")))
            if want is not None and not want(key):
                continue
            link = rec["chain"]
            prev, seq = _text(link.get("prev")), rec.get("rule_seq")
            try:
                sealed = chain.link(prev, rec) == link.get("hash")
            except (ValueError, RecursionError):
                sealed = False
            if not isinstance(seq, int) or isinstance(seq, bool):
                seq = None  # whatever it was (a list cannot even be looked up)
            entries.append(Entry(n, key, seq, prev, _text(link.get("hash")), sealed))
    return entries, bad, count


# --- checking the links ---------------------------------------------------------------


def check(entries: list[Entry], seeds: dict[Key, Entry]) -> dict[Key, Chain]:
    """Every chain's own links; a seed is the record that came just before, elsewhere."""
    chains: dict[Key, Chain] = {}
    positions: dict[Key, dict[int | None, int]] = {}
    for e in entries:
        positions.setdefault(e.key, {}).setdefault(e.seq, e.line)
    for e in entries:
        key, n, seq = e.key, e.line, e.seq
        c = chains.get(key)
        if c is None:
            c = chains[key] = Chain(*key)
            seed = seeds.get(key)
            if seed is not None:
                c.last, c.last_hash = seed.seq, seed.hash
        if c.brk:
            continue
        c.records += 1
        sid = key[2]
        if seq is None or not e.sealed:
            msg = f"line {n} (rule_seq {seq}) was changed after it was chained"
            c.brk = Break("edited", n, seq, msg, sid)
            continue
        expected = (c.last or 0) + 1
        if c.seen.get(seq) == e.hash:
            c.duplicates += 1  # at_least_once delivered it twice: same record
            continue
        if seq in c.seen:
            held = positions[key][seq]
            msg = f"line {n} claims rule_seq {seq}, which line {held} already holds"
            c.brk = Break("inserted", n, seq, msg, sid)
            continue
        if seq < expected:
            msg = f"line {n} holds rule_seq {seq} after rule_seq {c.last}"
            c.brk = Break("reordered", n, seq, msg, sid)
            continue
        if seq == expected:
            if e.prev != c.last_hash:
                msg = f"line {n} (rule_seq {seq}) does not link to the record before it"
                c.brk = Break("inserted", n, seq, msg, sid)
                continue
        else:
            later = _later(positions[key], expected, seq, n)
            if later is not None:
                msg = f"line {n} holds rule_seq {seq} before rule_seq {later}"
                c.brk = Break("reordered", n, seq, msg, sid)
                continue
            if e.prev != c.last_hash:
                msg = f"rule_seq {expected}..{seq - 1} missing before line {n}"
                c.brk = Break("deleted", n, seq, msg, sid)
                continue
            c.gaps.append((expected, seq - 1))  # dropped by the dispatcher: link intact
        c.seen[seq] = e.hash
        c.lines[seq] = n
        c.first = seq if c.first is None else c.first
        c.last, c.last_hash = seq, e.hash
    return chains


def _later(where: dict[int | None, int], low: int, high: int, line: int) -> int | None:
    """The first rule_seq in [low, high) that comes after `line`; bounded by the chain's
    size, since a forged rule_seq can be any number."""
    if high - low <= len(where):
        return next((s for s in range(low, high) if where.get(s, 0) > line), None)
    found = [s for s, n in where.items() if s is not None and low <= s < high and n > line]
    return min(found, default=None)


def verify(path: str, rule: str | None = None) -> Report:
    """Check `path`; with `rule` (SENSOR/RULE) also against the stored heads."""
    if not rule:
        entries, bad, count = scan(path, None)
        chains = list(check(entries, {}).values())
        return Report(chains, _ordered(bad, chains), count)
    sensor, _, name = rule.partition("/")
    return against_heads(path, sensor, name)


def _ordered(bad: list[Break], chains: list[Chain]) -> list[Break]:
    found = bad + [c.brk for c in chains if c.brk]
    return sorted(found, key=lambda b: b.line)  # stable: a bad line before a chain's


# --- against the stored heads (--rule) ----------------------------------------------------


def _records_of(path: str, sensor: str, rule: str, sids: set[str]) -> list[Entry]:
    return scan(path, lambda k: (k[0], k[1]) == (sensor, rule) and k[2] in sids)[0]


def _tail(c: Chain, h: heads.Head, end: int, nxt: tuple[Entry, str] | None) -> Break | None:
    """Does the chain end where its head says (or go on in the next dated file)?"""
    sid = c.session_id
    if c.last_hash in h.ends:
        return None
    if nxt is not None:
        e, p = nxt
        if e.prev == c.last_hash:
            return None
        msg = (
            f"the file ends at rule_seq {c.last} of session {sid}; {p} goes on at "
            f"rule_seq {e.seq}, which does not link to it"
        )
        return Break("truncated", end, c.last, msg, sid)
    for s, hh in c.seen.items():
        if hh in h.ends and c.last is not None and s < c.last:
            after = min(x for x in c.seen if x > s)
            line = c.lines[after]
            msg = f"line {line} (rule_seq {after}) comes after session {sid}'s stored head"
            return Break("inserted", line, after, msg, sid)
    if (c.last or 0) < h.rule_seq:
        msg = (
            f"the file ends at rule_seq {c.last} of session {sid}; "
            f"the stored head is at {h.rule_seq}"
        )
        return Break("truncated", end, c.last, msg, sid)
    return Break("edited", end, c.last, "the last record's hash is not the stored head", sid)


def against_heads(path: str, sensor: str, rule: str) -> Report:
    """The file's chains of one rule against its stored heads (the module docstring)."""
    stored = heads.known_heads(sensor, rule)
    defined, tmpl = heads.rule_template(sensor, rule)
    if not defined and not stored:
        raise UnknownRule(f"{sensor}/{rule}")
    entries, bad, count = scan(path, lambda k: (k[0], k[1]) == (sensor, rule))
    end = max([e.line for e in entries] + [b.line for b in bad], default=0)
    place = tmpl.match(path) if tmpl else None
    date = place["date"] if place else None  # only a {date} template that renders here
    seeds = {}
    if tmpl and date:
        here = list(dict.fromkeys(e.key[2] for e in entries))
        for sid, (e, _) in tmpl.neighbours(date, here, False, _records_of).items():
            if e.seq is not None and e.sealed:
                seeds[(sensor, rule, sid)] = e
    chains = list(check(entries, seeds).values())
    for c in chains:
        h = stored.get(c.session_id)
        c.head = h.as_json() if h else None
    tails = [c for c in chains if not c.brk and c.session_id in stored]
    cut = [c.session_id for c in tails if c.last_hash not in stored[c.session_id].ends]
    nexts = tmpl.neighbours(date, cut, True, _records_of) if tmpl and date and cut else {}
    for c in tails:
        c.brk = _tail(c, stored[c.session_id], end, nexts.get(c.session_id))

    every = sorted(s for s, h in stored.items() if heads.wrote_something(h))
    claimed = every if place is None else [s for s in every if place["session_id"] in (None, s)]
    owed = claimed if place is not None and date is None else None  # must all be here
    present = {c.session_id for c in chains}
    lost: list[Break] = []
    for sid in owed or []:
        if sid not in present:
            h = stored[sid]
            msg = (
                f"session {sid} has no record here; its stored head is at rule_seq "
                f"{h.rule_seq} and the rule's path names this file"
            )
            c = Chain(sensor, rule, sid, head=h.as_json())
            c.brk = Break("missing", end, None, msg, sid)
            chains.append(c)
    if owed is None and claimed and not present:
        msg = f"no record of {sensor}/{rule} here, though {len(claimed)} session(s) wrote some"
        lost.append(Break("missing", end, None, msg))
    about = {
        "sensor": sensor,
        "rule": rule,
        "defined": defined,
        "target": tmpl.path if tmpl else None,
        "renders_here": place is not None,
        "sessions_with_heads": len(stored),
        "sessions_owed": owed,
    }
    return Report(chains, _ordered(bad + lost, chains), count, about)
