"""A live tap's files, and the worker's side of it (`ways sensors tap`, the reader, is
services/tap.py).

A tap is two files in `<state>/taps/` (0700, layout.py), named by the tapping process's id:

    <pid>.tap     {"pid": <pid>, "rules": ["sensor/rule" | "sensor", ...]}   0600
    <pid>.jsonl   the records the tapped rules deliver, one JSON line each    0600

The reader writes the `.tap` file last (so a worker never sees a tap without its data
file), follows the `.jsonl` file, and removes both when it ends; a tap killed without
that is seen as dead (its pid gone) and its files are removed by the next tap to start
(`sweep`).

The worker (dispatch/worker.py) calls `offer(rule_id, lines)` once per batch, just
before its first delivery attempt: each line is the record exactly as the consumer
receives it (numbered, projected, masked, chained), the same bytes the target gets.
`offer` never raises and never blocks on the reader: it looks at the taps folder at most
every LOOK_EVERY seconds (one `listdir` of a folder that usually does not exist), and
appends under an flock the reader takes only to read and truncate. So a dispatcher with
no tap pays two failed listdirs a second, delivery and counters are unchanged whatever
the tap does, and the hook (which never calls `offer`) pays nothing. A tap file is
bounded: past TAP_CAP bytes unread (a stopped tap), offers to it are dropped, each drop
logged content-free in events.log (`tap.dropped`, rule and record count), never
blocking a worker. A tap that starts mid-session sees records from at most LOOK_EVERY
later.

Blocking rules deliver from the hook itself, not a worker: only their at_least_once
retries, which a worker makes, are tapped.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Sequence

from . import secure
from .layout import Layout

LOOK_EVERY = 0.5  # seconds between looks at the taps folder, per dispatcher
TAP_CAP = 16 << 20  # unread bytes a tap file may hold before offers to it are dropped
_lock = threading.Lock()
_seen: tuple[float, dict[str, list[str]]] = (-1e9, {})  # (when looked, {data file: rules})


def folder(state: str | None = None) -> str:
    return Layout(state).taps_dir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _registered(where: str, root: str) -> dict[str, list[str]]:
    """{data file: what it taps} of every live tap in `where`. The folder and each file
    pass the state root's checks (secure.py) as every state path does: a linked folder
    would send records outside the root, a FIFO would block the worker for good."""
    try:
        secure.ensure_private_dir(where, root, create=False)
        names = os.listdir(where)
    except (OSError, ValueError):
        return {}
    out = {}
    for name in names:
        if not name.endswith(".tap"):
            continue
        try:
            fd = secure.open_private(os.path.join(where, name), os.O_RDONLY, root)
            with os.fdopen(fd, "rb") as f:
                reg = json.loads(f.read(1 << 16))
            pid, rules = int(reg["pid"]), [str(r) for r in reg["rules"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid):
            out[os.path.join(where, f"{pid}.jsonl")] = rules
    return out


def _wanted(rule_id: str, rules: list[str]) -> bool:
    sensor = rule_id.split("/", 1)[0]
    return rule_id in rules or sensor in rules


def offer(rule_id: str, lines: Sequence[bytes], state: str | None = None) -> None:
    """Hand a batch's lines to every live tap of `rule_id` (worker.py); never raises."""
    global _seen
    try:
        now = time.monotonic()
        looked, taps = _seen  # one tuple, read without the lock: the common case
        if now - looked >= LOOK_EVERY:
            with _lock:
                looked, taps = _seen
                if now - looked >= LOOK_EVERY:
                    root = Layout(state).root
                    taps = _registered(folder(root), root)
                    _seen = (now, taps)
        if not taps:
            return
        for path, rules in taps.items():
            if _wanted(rule_id, rules) and not _append(path, lines):
                from . import events

                events.log("tap.dropped", rule=rule_id, records=len(lines))
    except Exception:  # a tap must never disturb delivery
        pass


def _append(path: str, lines: Sequence[bytes]) -> bool:
    """Append the lines; False when the tap's reader is TAP_CAP behind, or its file is
    refused by the state root's checks (dropped; secure.py logs the refusal)."""
    try:  # never creates one; O_NONBLOCK and a regular file only (secure.py)
        fd = secure.open_private(path, os.O_WRONLY | os.O_APPEND, path.rsplit("/", 2)[0])
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size > TAP_CAP:
            return False
        os.write(fd, b"".join(line + b"\n" for line in lines))
        return True
    finally:
        os.close(fd)


def sweep(where: str) -> None:
    """Remove the files of taps whose process is gone."""
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        stem, _, ext = name.rpartition(".")
        if ext in ("tap", "jsonl") and stem.isdigit() and not _alive(int(stem)):
            try:
                os.unlink(os.path.join(where, name))
            except OSError:
                pass
