"""Dead letters: the records an at_least_once rule parked (delivery.settle, a withheld
record: unfinished.py), one file per rule.

Dead letters: `<state>/deadletters/<rule key>.jsonl` (layout.py), 0600 in a 0700 folder, one
JSON line per parked record, appended with one write() (several dispatchers and hooks
may park into one rule's file):

    {"ts": when parked (ISO UTC), "session": id, "origin": "dispatch" | "blocking",
     "cause": "refused" | "error", "reason": "HTTP 400",
     "record": the record exactly as the consumer would have received it}

Everything but `record` is content-free. A record is parked before the rule's cursor
moves past it, so a crash in between parks it twice at worst, never loses it; a park
that fails (a full disk) leaves the record to be retried. `ways status` names each
file with its count of lines.

Bounded: a park that would take the file past DEADLETTER_MAX bytes first renames it
to `<rule key>.jsonl.1` (under the file's flock, so concurrent parkers rotate once),
replacing the older one; the records that older file held are given up, and
`dead_letter.rotated_out` says how many (content-free). So a rule's dead letters
never hold much more than 2 * DEADLETTER_MAX bytes (plus one batch); `ways status` and
the metrics count both files. Retention (retention.py) removes a dead-letter file
nothing was parked in for retention.DEAD_LETTER_AGE.
"""

from __future__ import annotations

import fcntl
import os
import time

from .. import jsoncore
from ..state import events, secure
from ..state.layout import Layout, rule_key
from .stages import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..config.rules import LoadedRule
    from ..targets.base import Outcome

DEADLETTER_MAX = 8 << 20  # bytes in one dead-letter file before it is rotated
ROTATED = ".1"  # the suffix of the older dead-letter file


def deadletter_folder(layout: Layout | None = None) -> str:
    return (layout or Layout()).deadletters_dir()


def deadletter_path(sensor: str, rule: str, layout: Layout | None = None) -> str:
    return (layout or Layout()).deadletters(rule_key(sensor, rule))


def park(
    rule: LoadedRule,
    records: Sequence[dict[str, Any]],
    outcome: Outcome,
    session: str,
    origin: str,
) -> bool:
    """Append `records` to the rule's dead-letter file; False (logged) when it fails."""
    meta = {
        "ts": events.iso_utc(time.time_ns()),
        "session": session,
        "origin": origin,
        "cause": outcome.cause,
        "reason": outcome.detail,
    }
    head = jsoncore.dumps(meta, ensure_ascii=True, separators=(",", ":"))[:-1].encode()
    path = deadletter_path(rule.sensor, rule.name)
    try:
        data = b"".join(head + b',"record":' + dumps(rec) + b"}\n" for rec in records)
        secure.ensure_private_dir(deadletter_folder(), Layout().root)
        _append_bounded(path, data, rule.sensor, rule.name, session)
    except Exception as exc:  # OSError (a full disk), or a record that cannot be encoded
        events.log(
            f"{origin}.dead_letter_failed",
            sensor=rule.sensor,
            rule=rule.name,
            session=session,
            error=type(exc).__name__,
        )
        return False
    events.log(
        f"{origin}.dead_letter",
        sensor=rule.sensor,
        rule=rule.name,
        session=session,
        rule_seq=records[0].get("rule_seq"),
        records=len(records),
        cause=outcome.cause,
        reason=outcome.detail,
    )
    return True


def count_lines(path: str) -> int:
    """Lines in `path` (0 when it cannot be read)."""
    count = 0
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                count += chunk.count(b"\n")
    except OSError:
        pass
    return count


def _append_bounded(path: str, data: bytes, sensor: str, rule: str, session: str) -> None:
    """Append `data` with one write(), rotating the file first when it would pass
    DEADLETTER_MAX. The flock makes the check and the rename one step for every
    parker; one that opened the file before another renamed it opens it again."""
    for _ in range(8):
        fd = secure.open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            try:
                if os.lstat(path).st_ino != st.st_ino:
                    continue  # rotated away since we opened it
            except FileNotFoundError:
                continue
            size = st.st_size
            if size and size + len(data) > DEADLETTER_MAX:
                gone = count_lines(path + ROTATED)
                os.replace(path, path + ROTATED)
                events.log(
                    "dead_letter.rotated",
                    sensor=sensor,
                    rule=rule,
                    session=session,
                    bytes=size,
                    rotated_out=gone,
                )
                continue
            secure.write_all(fd, data)
            return
        finally:
            os.close(fd)  # releases the lock
    raise OSError("the dead-letter file kept moving")


def dead_letters(layout: Layout | None = None) -> dict[str, tuple[str, int]]:
    """{rule key (`sensor.rule`): (file, parked records)} for every dead-letter file;
    the count includes its rotated older file."""
    folder = deadletter_folder(layout)
    out: dict[str, tuple[str, int]] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        count = count_lines(path) + count_lines(path + ROTATED)
        out[name[: -len(".jsonl")]] = (path, count)
    return out
