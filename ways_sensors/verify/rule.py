"""`verify --rule`: a file's chains of one rule against the rule's stored chain heads.

Which sessions must be in the file (heads.py says where heads are stored; a head names
no file, so the rule's current `file` path template decides):

* The rule must be in a layer or have a stored head, else UnknownRule (exit 2).
* Every session with records of the rule here is checked against its head: its chain
  must end with the record the head names (or, while one is being delivered, the one
  before it), here or, when it goes on in another file (links.py), there; a cut tail
  is `truncated`, whatever `rule_seq` drops skipped.
* When the template renders to this file: without `{date}`, every session the path
  names (all sessions with a head that wrote something, when the path has no
  `{session_id}`) must have records here, else `missing`. With `{date}`, a head cannot
  tell which days a session wrote, so an absent session is not reported here; checking
  every file the rule wrote (`rule_files`) reports a session with no record in any.
* A file holding no record of the rule is `missing` when a session it may belong to
  (the one its path names, or any session when the template does not render to it)
  has a head that wrote something: a file target creates its file by writing to it.

Known limits: heads do not record the project or the path in force when they were
written; after the rule's path changes, or when another project's layer reuses the
rule's name with another path, sessions recorded elsewhere are reported missing from
a shared (not per-session) file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..state.layout import rule_label
from . import heads
from .breaks import Break
from .links import Chain, Others, check, ordered
from .read import scan


class UnknownRule(Exception):
    """--rule names a rule no layer defines and no session has a head for."""


@dataclass
class Known:
    """What the state root and the layers know of one rule."""

    sensor: str
    rule: str
    stored: dict[str, heads.Head]  # by session id
    defined: bool  # in a layer
    tmpl: heads.Template | None  # its file target's path, when it writes JSON lines


def known(sensor: str, rule: str) -> Known:
    stored = heads.known_heads(sensor, rule)
    defined, tmpl = heads.rule_template(sensor, rule)
    if not defined and not stored:
        raise UnknownRule(rule_label(sensor, rule))
    return Known(sensor, rule, stored, defined, tmpl)


def _tail(c: Chain, h: heads.Head, end: int, others: Others, path: str) -> Break | None:
    """Does the chain end where its head says (or go on in another file)?"""
    sid = c.session_id
    if c.last_hash in h.ends or c.last is None:
        return None
    key = (c.sensor, c.rule, sid)
    if others.after(key, c.last, path) is not None:
        return None  # it goes on elsewhere and links (check() broke it otherwise)
    for s, hh in c.seen.items():
        if hh in h.ends and s < c.last:
            after = min(x for x in c.seen if x > s)
            line = c.lines[after]
            msg = f"line {line} (rule_seq {after}) comes after session {sid}'s stored head"
            return Break("inserted", msg, line=line, rule_seq=after, session_id=sid)
    if c.last < h.rule_seq:
        msg = (
            f"the file ends at rule_seq {c.last} of session {sid}; "
            f"the stored head is at {h.rule_seq}"
        )
        return Break("truncated", msg, line=end, rule_seq=c.last, session_id=sid)
    msg = "the last record's hash is not the stored head"
    return Break("edited", msg, line=end, rule_seq=c.last, session_id=sid)


def against_heads(
    path: str, k: Known, others: Others
) -> tuple[list[Chain], list[Break], int, dict[str, Any]]:
    """(chains, breaks in file order, non-blank lines, what was looked at) of one file."""
    sensor, rule, stored, tmpl = k.sensor, k.rule, k.stored, k.tmpl
    entries, bad, count = scan(path, lambda k: (k[0], k[1]) == (sensor, rule))
    end = max([e.line for e in entries] + [b.line or 0 for b in bad], default=0)
    place = tmpl.match(path) if tmpl else None
    date = place["date"] if place else None  # only a {date} template that renders here
    chains = list(check(entries, others, path).values())
    for c in chains:
        h = stored.get(c.session_id)
        c.head = h.as_json() if h else None
        if c.brk is None and h is not None:
            c.brk = _tail(c, h, end, others, path)

    every = sorted(s for s, h in stored.items() if heads.wrote_something(h))
    claimed = every if place is None else [s for s in every if place["session_id"] in (None, s)]
    owed = claimed if place is not None and date is None else None  # must all be here
    present = {c.session_id for c in chains}
    for sid in owed or []:
        if sid not in present:
            h = stored[sid]
            msg = (
                f"session {sid} has no record here; its stored head is at rule_seq "
                f"{h.rule_seq} and the rule's path names this file"
            )
            c = Chain(sensor, rule, sid, head=h.as_json())
            c.brk = Break("missing", msg, line=end, session_id=sid)
            chains.append(c)
    if owed is None and claimed and not present:
        label = rule_label(sensor, rule)
        msg = f"no record of {label} here, though {len(claimed)} session(s) wrote some"
        bad.append(Break("missing", msg, line=end))
    about = {
        "sensor": sensor,
        "rule": rule,
        "defined": k.defined,
        "target": tmpl.path if tmpl else None,
        "renders_here": place is not None,
        "sessions_with_heads": len(stored),
        "sessions_owed": owed,
    }
    return chains, ordered(bad, chains), count, about


def absent(k: Known, seen: set[str]) -> list[Break]:
    """Sessions whose head says they wrote something, with no record in any file read."""
    out = []
    sensor, rule = k.sensor, k.rule
    for sid in sorted(k.stored):
        h = k.stored[sid]
        if heads.wrote_something(h) and sid not in seen:
            msg = (
                f"session {sid} has no record of {rule_label(sensor, rule)} in any file the rule "
                f"wrote; its stored head is at rule_seq {h.rule_seq}"
            )
            out.append(Break("missing", msg, line=0, session_id=sid))
    return out
