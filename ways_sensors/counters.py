"""Per-rule counters, totalled across sessions: `<state>/counters/<sensor>.<rule>.json`.

Each dispatcher (and the blocking path) adds its deltas under an flock of the file,
at most about once a second and when it exits, so counting never slows delivery.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections import Counter

from . import roots

KINDS = (
    "dispatched",
    "delivered",
    "timeouts",
    "kills",
    "refusals",
    "errors",
    "drops",
    "retries",
    "lost",
    "redactions",
)


def folder() -> str:
    return os.path.join(roots.state_root(), "counters")


def path_for(rid: str) -> str:
    return os.path.join(folder(), rid + ".json")


def add(rid: str, deltas: dict[str, int]) -> None:
    """Add `deltas` to the rule's totals, atomically with respect to other writers."""
    deltas = {k: v for k, v in deltas.items() if v}
    if not deltas:
        return
    roots.makedirs_private(folder())
    fd = os.open(path_for(rid), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        try:
            totals = json.loads(raw) if raw.strip() else {}
        except ValueError:
            totals = {}
        for k, v in deltas.items():
            totals[k] = int(totals.get(k, 0)) + v
        data = json.dumps(totals, sort_keys=True).encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
    finally:
        os.close(fd)


def read_all() -> dict[str, dict[str, int]]:
    out = {}
    try:
        names = os.listdir(folder())
    except OSError:
        return out
    for name in sorted(names):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(folder(), name)) as f:
                out[name[:-5]] = {k: int(v) for k, v in json.load(f).items()}
        except (OSError, ValueError):
            continue
    return out


class Tally:
    """In-memory deltas for one rule, flushed to disk by its owner."""

    def __init__(self, rid: str):
        self.rid = rid
        self._lock = threading.Lock()
        self._deltas: Counter[str] = Counter()

    def count(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._deltas[kind] += n

    def flush(self) -> None:
        with self._lock:
            deltas, self._deltas = dict(self._deltas), Counter()
        try:
            add(self.rid, deltas)
        except OSError:
            with self._lock:
                self._deltas.update(deltas)
