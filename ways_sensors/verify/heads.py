"""A rule's stored chain heads, and which files its file target writes, for `verify --rule`.

The heads are written by others; layout.py says where, and reads them (`session_head`:
a blocking rule's `.head`, else an async rule's worker cursor with its `pending`
batch, the numbered, chained records still being delivered (one record, before
batching); `ledger_head`: what a finished session left). State files are opened
without following links, must be regular files and are read up to a cap
(layout.read_state).

A live session's cursor wins over its ledger entry (the cursor started from it).
`rule_seq` also counts records dropped by `queue_cap`, which leave the hash as it was,
so the hash, not the number, says which record the file must end with.

A head does not name a file. For a rule whose target is `file`, this module renders the
rule's current path template to tell which sessions write to a given file:
`{sensor}` and `{rule}` are the rule's, `{session_id}` a session id, `{date}` one path
segment.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from typing import Any

from ..pipeline import chain
from ..state.layout import Layout

MAX_FILES = 10_000  # files `verify --rule` reads when no file is named
_PLACEHOLDER = re.compile(r"\{(session_id|date|sensor|rule)\}")
_SEGMENT = {"session_id": r"[A-Za-z0-9_-]{1,128}", "date": r"[^/]+"}


@dataclass
class Head:
    session_id: str
    rule_seq: int
    hash: str
    written: str  # hash of the last record the file should hold already
    in_flight: bool
    source: str  # "cursor" | "ledger"

    @property
    def ends(self) -> tuple[str, str]:
        """The hashes the file may end with: the head's, or the one before while the
        head's record is still being delivered."""
        return self.hash, self.written

    def as_json(self) -> dict[str, Any]:
        return {
            "rule_seq": self.rule_seq,
            "hash": self.hash,
            "in_flight": self.in_flight,
            "source": self.source,
        }


def rule_template(sensor: str, rule: str) -> tuple[bool, Template | None]:
    """(is the rule in a layer, its file target's template when it writes JSON lines)."""
    from ..config.layers import load

    found = load().sensors.get(sensor)
    r = found.rules.get(rule) if found else None
    if r is None:  # a refused project layer still defines it, though it never ran
        found = load(with_project=True).sensors.get(sensor)
        return bool(found and rule in found.rules), None
    d = r.spec.dispatch
    if d.kind != "file" or d.target.format != "json":
        return True, None
    return True, Template(os.path.expanduser(d.target.path), sensor, rule)


def known_heads(sensor: str, rule: str, layout: Layout | None = None) -> dict[str, Head]:
    """Every session with a stored head for the rule, by session id."""
    layout = layout or Layout()
    out: dict[str, Head] = {}
    for sid in layout.ledger_sessions():
        pair = layout.ledger_head(sid, sensor, rule)
        if pair:
            out[sid] = Head(sid, pair[0], pair[1], pair[1], False, "ledger")
    for sid in layout.sessions():
        h = layout.session_head(sid, sensor, rule)
        if h is None:
            continue  # never numbered anything here: the ledger (if any) stands
        pending = h.pending
        batch = pending if isinstance(pending, list) and pending else [pending]  # worker.py
        first, last = (
            r.get("chain") if isinstance(r, dict) else None for r in (batch[0], batch[-1])
        )
        written = h.hash
        if isinstance(last, dict) and last.get("hash") == h.hash and isinstance(first, dict):
            written = str(first.get("prev"))  # the batch is numbered, maybe not yet in the file
        out[sid] = Head(sid, h.rule_seq, h.hash, written, pending is not None, "cursor")
    return out


def wrote_something(head: Head) -> bool:
    """False when every record the rule numbered was dropped or is still in flight."""
    return head.written != chain.GENESIS and head.rule_seq > 0


# --- the file target's path template ------------------------------------------------


@dataclass
class Template:
    """A file target's path, expanded (`~`), for one sensor and rule."""

    path: str
    sensor: str
    rule: str

    @property
    def per_session(self) -> bool:
        return "{session_id}" in self.path

    def _regex(self, path: str, session_id: str | None) -> re.Pattern[str]:
        out, seen, pos = [], set(), 0
        for m in _PLACEHOLDER.finditer(path):
            out.append(re.escape(path[pos : m.start()]))
            name = m.group(1)
            if name in ("sensor", "rule"):
                out.append(re.escape(self.sensor if name == "sensor" else self.rule))
            elif name == "session_id" and session_id is not None:
                out.append(re.escape(session_id))
            elif name in seen:
                out.append(f"(?P={name})")
            else:
                out.append(f"(?P<{name}>{_SEGMENT[name]})")
                seen.add(name)
            pos = m.end()
        out.append(re.escape(path[pos:]))
        return re.compile("".join(out))

    def _forms(self) -> list[str]:
        """The template, and the template with its fixed leading folders resolved."""
        fixed = self.path.split("{", 1)[0].rpartition("/")[0]
        forms = [self.path]
        if fixed:
            real = os.path.realpath(fixed)
            if real != fixed:
                forms.append(real + self.path[len(fixed) :])
        return forms

    def match(self, file: str, session_id: str | None = None) -> dict[str, str | None] | None:
        """The values the template takes to render `file` ({} when it has none), or None."""
        for cand in dict.fromkeys((os.path.abspath(file), os.path.realpath(file))):
            for form in self._forms():
                m = self._regex(form, session_id).fullmatch(cand)
                if m:
                    d = m.groupdict()
                    return {"session_id": d.get("session_id", session_id), "date": d.get("date")}
        return None

    def files(self) -> list[str]:
        """Every regular file the template can render to (any session, any date), at
        most MAX_FILES."""
        pattern, pos = [], 0
        for m in _PLACEHOLDER.finditer(self.path):
            pattern.append(glob.escape(self.path[pos : m.start()]))
            value = {"sensor": self.sensor, "rule": self.rule}.get(m.group(1))
            pattern.append("*" if value is None else glob.escape(value))
            pos = m.end()
        pattern.append(glob.escape(self.path[pos:]))
        out = []
        for i, path in enumerate(glob.iglob("".join(pattern))):
            if i >= MAX_FILES:
                break
            if self.match(path) is not None and os.path.isfile(path):
                out.append(path)
        return sorted(out)
