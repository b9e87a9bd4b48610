"""Parked records, read, replayed and dropped: what `ways deadletters` does.

A rule's dead letters are its file and the older rotated one (deadletters.py has the
format); read oldest first (`.1`, then the file), in the order they were parked. A
selection is a rule (`sensor/rule`, or every rule) and optionally a session.

Replay sends each selected record, exactly as it was parked (numbered, masked and
chained as the consumer would have received it), through the rule's current target
with delivery.attempt, one record per attempt, in order. A rule's replay stops at its
first record that is not accepted: sending later ones past it would put the chain out
of order at the consumer. Only the records the consumer accepted are removed; accepted
ones count as `delivered` in the rule's counters (the consumer has them now). A target
that cannot confirm a record (syslog over UDP: base.unconfirmed) gets every record sent
once, and keeps them all: nothing says they arrived, so `ways deadletters drop` removes
them once the consumer shows them.

Removal rewrites the files under the dead-letter file's flock (the lock every parker
takes), keeping every line not removed and everything parked since the files were read;
the rewritten file replaces the old one by rename, which a parker holding the old one
notices (deadletters._append_bounded). Files that rotated meanwhile are left as they
are and the removal is reported undone (a replay again would send those records twice;
`verify` skips duplicates). One replay or drop per rule at a time (`<key>.lock`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .. import jsoncore
from ..config.layers import Catalog
from ..config.rules import LoadedRule
from ..errors import UsageError
from ..pipeline import delivery
from ..pipeline.deadletters import ROTATED, deadletter_folder
from ..state import events, secure
from ..state.counters import Tally
from ..state.layout import Layout, rule_key, rule_label, split_rule_key, split_rule_label


@dataclass
class Parked:
    """One parked line: where it is (file suffix, index) and what it holds."""

    where: tuple[str, int]  # ("" or ".1", line index)
    meta: dict[str, Any]  # ts, session, origin, cause, reason
    record: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {**self.meta, "record": self.record}


@dataclass
class Snapshot:
    """A rule's dead-letter files as read: their identity, bytes and parsed lines."""

    key: str
    files: dict[str, tuple[int, bytes]] = field(default_factory=dict)  # suffix -> (ino, data)
    parked: list[Parked] = field(default_factory=list)


def rule_keys(rule: str | None, layout: Layout) -> list[str]:
    """The rule keys with dead-letter files, or `rule`'s alone (UsageError: not sensor/rule)."""
    if rule is not None:
        if "/" not in rule:
            raise UsageError(f"{rule!r} is not sensor/rule", hint="`ways deadletters list`")
        return [rule_key(*split_rule_label(rule))]
    try:
        names = os.listdir(deadletter_folder(layout))
    except OSError:
        return []
    keys = set()
    for suffix in (".jsonl", ".jsonl" + ROTATED):
        keys |= {n[: -len(suffix)] for n in names if n.endswith(suffix)}
    return sorted(keys)


def read(key: str, session: str | None, layout: Layout) -> Snapshot:
    """The rule's parked records, oldest first; only `session`'s when given."""
    snap = Snapshot(key)
    base = layout.deadletters(key)
    for suffix in (ROTATED, ""):
        try:
            fd = secure.open_private(base + suffix, os.O_RDONLY)
        except FileNotFoundError:
            continue
        with open(fd, "rb") as f:
            data = f.read()
            snap.files[suffix] = (os.fstat(f.fileno()).st_ino, data)
        for i, line in enumerate(data.split(b"\n")[:-1]):  # a torn last line is kept as is
            try:
                doc = jsoncore.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("record"), dict):
                continue
            record = doc.pop("record")
            if session is None or doc.get("session") == session:
                snap.parked.append(Parked((suffix, i), doc, record))
    return snap


def loaded(cat: Catalog, key: str) -> LoadedRule:
    """The rule as it is now configured (UsageError when it no longer exists)."""
    sensor, name = split_rule_key(key)
    found = cat.sensors.get(sensor)
    rule = found.rules.get(name) if found is not None else None
    if rule is None:
        raise UsageError(
            f"no rule {rule_label(sensor, name)} is configured to replay through",
            hint="restore it, or `ways deadletters drop` its records",
        )
    return rule


@dataclass
class Replayed:
    rule: str
    delivered: int = 0
    unconfirmed: int = 0  # sent where nothing can confirm it (UDP): kept all the same
    kept: int = 0  # not attempted after a failure, or unconfirmed
    failed: str = ""  # the failure that stopped it: "refused (HTTP 503, retryable)"
    removed: bool = True  # the delivered ones were removed from the files

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "delivered": self.delivered,
            "unconfirmed": self.unconfirmed,
            "kept": self.kept,
            "failed": self.failed or None,
            "removed": self.removed,
        }


def replay(cat: Catalog, key: str, session: str | None, layout: Layout) -> Replayed:
    """Send the rule's parked records through its current target (the module docstring)."""
    rule = loaded(cat, key)
    out = Replayed(rule.label)
    with _exclusive(key, layout):
        snap = read(key, session, layout)
        tally = Tally(key, layout)
        done: list[Parked] = []
        try:
            for i, p in enumerate(snap.parked):
                sid = str(p.meta.get("session", ""))
                got = delivery.attempt(rule, [p.record], session=sid, tally=tally, origin="replay")
                if not got.accepted:
                    why = f"{got.cause or 'error'}: {got.detail}, {got.status}"
                    out.failed, out.kept = why, len(snap.parked) - i
                    break
                if got.unconfirmed:
                    out.unconfirmed += 1  # sent, and kept: nothing says it arrived
                    continue
                done.append(p)
        finally:
            delivery.close(rule)
            tally.flush()
        out.delivered = len(done)
        out.kept = len(snap.parked) - len(done)
        if done:
            out.removed = _remove(snap, done, layout)
        events.log(
            "dead_letter.replayed",
            sensor=rule.sensor,
            rule=rule.name,
            delivered=out.delivered,
            unconfirmed=out.unconfirmed,
            kept=out.kept,
            removed=out.removed,
        )
    return out


def drop(key: str, session: str | None, layout: Layout) -> tuple[int, bool]:
    """Remove the rule's parked records (`session`'s only when given): (how many, done)."""
    with _exclusive(key, layout):
        snap = read(key, session, layout)
        ok = _remove(snap, snap.parked, layout) if snap.parked else True
    sensor, name = split_rule_key(key)
    events.log("dead_letter.dropped", sensor=sensor, rule=name, records=len(snap.parked), done=ok)
    return len(snap.parked), ok


@contextmanager
def _exclusive(key: str, layout: Layout) -> Iterator[None]:
    folder = deadletter_folder(layout)
    secure.ensure_private_dir(folder, layout.root)
    fd = secure.open_private(os.path.join(folder, key + ".lock"), os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another replay or drop of {rule_label(*split_rule_key(key))} is running"
            ) from None
        yield
    finally:
        os.close(fd)


def _remove(snap: Snapshot, gone: list[Parked], layout: Layout) -> bool:
    """Rewrite the files without `gone`'s lines; False (nothing changed) when a file
    was rotated or rewritten since `snap` read it."""
    base = layout.deadletters(snap.key)
    drop_at = {p.where for p in gone}
    fd = secure.open_private(base, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the parkers' lock: none appends meanwhile
        now: dict[str, tuple[int, bytes]] = {}
        for suffix in snap.files:
            try:
                with open(base + suffix, "rb") as f:
                    now[suffix] = (os.fstat(f.fileno()).st_ino, f.read())
            except FileNotFoundError:
                return False
        for suffix, (ino, data) in snap.files.items():
            cur_ino, cur = now[suffix]
            if cur_ino != ino or not cur.startswith(data):
                return False  # rotated or rewritten since it was read
        for suffix, (_, data) in snap.files.items():
            lines = data.split(b"\n")
            kept = [x + b"\n" for i, x in enumerate(lines[:-1]) if (suffix, i) not in drop_at]
            body = b"".join(kept) + lines[-1] + now[suffix][1][len(data) :]
            _replace(base + suffix, body, layout)
        return True
    finally:
        os.close(fd)


def _replace(path: str, body: bytes, layout: Layout) -> None:
    """`path` holding `body` (0600, by rename), or gone when `body` is empty."""
    if not body:
        os.unlink(path)
        return
    tmp = path + ".replay"
    fd = secure.open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        secure.write_all(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
