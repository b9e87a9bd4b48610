"""`ways sensors tap RULE|SENSOR`: a live view of what rules deliver (the reader).

The tap's files and the worker's side are taps.py (state/taps.py): the reader registers
its `.tap` file last, follows its `.jsonl` file, prints what arrives, and removes both
when it ends (Ctrl-C).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from .. import roots
from ..state import taps

POLL = 0.1  # the reader's wait between reads when nothing came


# --- the reader: `ways sensors tap` -------------------------------------------------


class Tap:
    """A registered tap; iterate `records()` until stopped, then `close()`."""

    def __init__(self, rules: list[str], state: str | None = None) -> None:
        from ..state import secure

        self.where = taps.folder(state)
        root = state or roots.state_root()
        secure.ensure_private_dir(self.where, root)
        taps.sweep(self.where)
        pid = os.getpid()
        self.data = os.path.join(self.where, f"{pid}.jsonl")
        self.reg = os.path.join(self.where, f"{pid}.tap")
        fd = secure.open_private(self.data, os.O_RDWR | os.O_CREAT | os.O_TRUNC, root)
        self.fd = fd
        body = json.dumps({"pid": pid, "rules": rules}).encode()
        secure.replace_private(self.reg, body, root)  # last: a worker now sees the tap

    def records(self, stop: Callable[[], bool]) -> Iterator[bytes]:
        """Each line a worker appends, as it arrives, until `stop()` is true."""
        pending = b""
        while not stop():
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            try:
                os.lseek(self.fd, 0, os.SEEK_SET)
                chunk = b""
                while True:
                    got = os.read(self.fd, 1 << 20)
                    if not got:
                        break
                    chunk += got
                if chunk:
                    os.ftruncate(self.fd, 0)
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            if not chunk:
                time.sleep(POLL)
                continue
            pending += chunk
            *whole, pending = pending.split(b"\n")
            yield from (line for line in whole if line)

    def close(self) -> None:
        for path in (self.reg, self.data):
            try:
                os.unlink(path)
            except OSError:
                pass
        os.close(self.fd)


def pretty(line: bytes) -> str:
    """One short human line for a record: time, rule and number, section, a summary."""
    try:
        rec: dict[str, Any] = json.loads(line)
    except ValueError:
        return line.decode("utf-8", "replace")
    if rec.get("section") == "checkpoint" and "chain" not in rec:  # evidence/sealer.py
        size = str(rec.get("checkpoint", "")).split("\n")[1:2] or ["?"]
        rid = f"{rec.get('sensor')}/{rec.get('rule')}"
        stamp = str(rec.get("timestamp", ""))[11:23]
        return (
            f"{stamp} {rid} checkpoint: records up to #{rec.get('last_rule_seq')} signed "
            f"(tree size {size[0]}, key epoch {rec.get('epoch')})"
        )
    data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
    assert isinstance(data, dict)
    what = data.get("tool_name") or data.get("phase") or data.get("kind") or ""
    text = data.get("command") or data.get("prompt") or data.get("text") or ""
    if not text and isinstance(data.get("input"), dict):
        text = json.dumps(data["input"], ensure_ascii=False)
    summary = " ".join(str(x) for x in (what, text) if x).replace("\n", " ")
    if len(summary) > 100:
        summary = summary[:97] + "..."
    stamp = str(rec.get("timestamp", ""))[11:23]
    rid = f"{rec.get('sensor')}/{rec.get('rule')}#{rec.get('rule_seq')}"
    return f"{stamp} {rid} {rec.get('section')} {summary}".rstrip()
