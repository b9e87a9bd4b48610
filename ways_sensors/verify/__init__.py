"""Checking chained files: which link broke first, and how (SPEC section 8).

A file may hold several chains (one per rule and session); each is checked on its own,
in file order. For each record: its hash must be sha256(prev + "\\n" + canonical record);
its `prev` must be the hash of the record before it (by rule_seq, in this file or in
another: links.py); `rule_seq` must go up by one. Records an at_least_once consumer
received twice are identical (same rule_seq, same hash) and are skipped. Each chain's
first anomaly is reported, and every line that is no record, the first in file order
first:

    edited      the record's hash does not match its content, or a line is not a chained
                record at all: not JSON, not UTF-8, nested too deeply to parse, or longer
                than LINE_CAP (reported without being read into memory whole)
    inserted    a record that does not belong: it claims a rule_seq already taken, or
                its prev does not link although its rule_seq is the expected one, or it
                comes after the record the stored head names
    reordered   an earlier rule_seq after a later one, or a jump whose missing record
                comes later in the file
    deleted     rule_seq jumps and the missing records are in no file read
    truncated   the file ends before a record that another file's continuation (or, with
                --rule, the stored chain head) says it held
    missing     (with --rule) a session whose head says it wrote here has no record left

Only the dispatcher's own `queue_cap` drops leave a gap with an intact link: reported
as a gap, not a break.

A restart is no break either: a record with rule_seq 1 linking to the genesis hash,
after the chain's records, begins the chain again (`restarts`, its line). A session
resumed after retention pruned its ledger entry (retention.LEDGER_MAX) numbers its
records from 1 again, in the same file; the records before and after are each checked
as a chain. (Anyone can append a fresh chain to a file whatever verify does: the hash
chain finds a changed, removed or reordered record, not one a writer of the file made.)

One chain, several files: `{date}` in a file target's path is each record's own UTC
date (its `timestamp`), so a session that crosses midnight, or a record recovered from
the transcript with an earlier time, puts one chain into several dated files. Each file
checked is read with the files that differ from it only in their dates (files.py) and
with every other file named: a chain that began or goes on in one of them is intact,
and reported as continuing there ("continues in FILE"), never as a break. Without
--rule a chain must start at rule_seq 1 in some file read.

`verify_files` checks several files (folders are walked); with a rule and no file, every
file the rule's path template renders to (rule.py says what --rule adds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .breaks import Break
from .files import TooMany, expand, siblings
from .links import Chain, Others, check, ordered
from .read import LINE_CAP, Entry, Key, scan
from .rule import Known, UnknownRule, absent, against_heads, known

__all__ = [
    "LINE_CAP",
    "Break",
    "Chain",
    "Entry",
    "Key",
    "Report",
    "Result",
    "TooMany",
    "UnknownRule",
    "verify",
    "verify_files",
]


@dataclass
class Report:
    chains: list[Chain]
    breaks: list[Break]  # every break found, in file order
    records: int  # non-blank lines read
    rule: dict[str, Any] | None = None  # what --rule looked at
    file: str = ""

    @property
    def first(self) -> Break | None:
        return self.breaks[0] if self.breaks else None


@dataclass
class Result:
    """Several files: one report each, and the sessions absent from all (with --rule)."""

    reports: list[Report]
    absent: list[Break] = field(default_factory=list)

    @property
    def breaks(self) -> list[Break]:
        return [b for r in self.reports for b in r.breaks] + self.absent

    @property
    def first(self) -> Break | None:
        found = self.breaks
        return found[0] if found else None


def _split_rule(rule: str | None) -> Known | None:
    if not rule:
        return None
    sensor, _, name = rule.partition("/")
    return known(sensor, name)


def _others(paths: list[str], named: list[str], k: Known | None) -> Others:
    """The records of `paths` and of their dated siblings, for the chains of `named`."""
    want = None if k is None else (lambda key: (key[0], key[1]) == (k.sensor, k.rule))
    files = list(dict.fromkeys([*paths, *(s for p in named for s in siblings(p))]))
    others = Others()
    for p in files:
        try:
            entries, _, _ = scan(p, want)
        except OSError:
            continue  # a sibling that went away or is not ours to read
        for e in entries:
            others.add(e)
    return others


def _one(path: str, others: Others, k: Known | None) -> Report:
    if k is None:
        entries, bad, count = scan(path, None)
        chains = list(check(entries, others, path).values())
        report = Report(chains, ordered(bad, chains), count, None, path)
    else:
        chains, breaks, count, about = against_heads(path, k, others)
        report = Report(chains, breaks, count, about, path)
    for b in report.breaks:
        b.file = path
    return report


def verify(path: str, rule: str | None = None) -> Report:
    """Check `path` (with its dated siblings); with `rule` (SENSOR/RULE) also against
    the stored heads."""
    k = _split_rule(rule)
    return _one(path, _others([], [path], k), k)


def verify_files(paths: list[str], rule: str | None = None) -> Result:
    """Check every file of `paths` (folders walked) as one set; with `rule` and no
    path, every file the rule's template renders to, and report each session with a
    stored head that has no record in any of them."""
    k = _split_rule(rule)
    whole_rule = not paths
    if whole_rule:
        if k is None:
            raise ValueError("verify_files needs paths or a rule")
        files = k.tmpl.files() if k.tmpl else []
    else:
        files = expand(paths)
    others = _others(files, files, k)
    result = Result([_one(p, others, k) for p in files])
    if whole_rule and k is not None:
        seen = {c.session_id for r in result.reports for c in r.chains if c.records}
        result.absent = absent(k, seen)
    return result
