"""Every rule's cursor in one append-only log per session, and each pending batch in a
file of its own only while it is in flight (what cursor.py's cursors are, on disk).

Why one log rather than a file per rule: a session with 2,000 rules kept 2,000 cursor
files at rest, and each commit replaced one of them (a temporary file and a rename).
The log keeps the cursor files at rest independent of the number of rules (the log
alone, plus a batch file per rule with a batch in flight), and a commit costs one
appended line of a few hundred bytes, whatever the number of rules. (Other per-rule
files in `cursors/` are not cursors and stay: a `chain: true` rule's `.leaves` and
`.checkpoint`, evidence/sealer.py; a blocking rule's `.head` and `.lock`, blocking.py;
a traces rule's `.traces`, traces/state.py.) Why not one file rewritten whole: 2,000
rules each committing would write O(rules) bytes per commit, O(rules²) in all.

    sessions/<sid>/cursors/cursors.log     (layout.cursor_log; 0600)
        one JSON object a line, a line per state change of a rule's cursor:
        {"rule": <key>, "rule_seq", "hash", "segment", "offset", "active", "tree"?,
         "finished_as", "batch": null | <token>}
        (dispatch/cursor.py says what each field means; cursorstate.Cursor types them
        and writes them in this order). Read back, the last line of each key wins; a
        line that does not parse (a torn tail: a kill mid-append) is ignored.
    sessions/<sid>/cursors/<key>.<token>.batch   (cursorread.batch_name; 0600)
        the pending batch of the line that names it: its records, one JSON line each,
        exactly as the consumer receives them (cursor.encode_batch). Made O_EXCL under a
        fresh random token, written whole before the line that names it is appended,
        unlinked after the line that no longer names it. A batch file no line names (a
        kill between those steps) is an orphan, removed when the log is next opened.

Who writes: only the session's dispatcher (under dispatch.lock), through one
`CursorLog` its workers share; their threads append under one lock, one write(2) per
line on an O_APPEND descriptor. Compaction: past max(COMPACT_FLOOR, twice the live
lines' size) the log is rewritten to one line per key (secure.replace_private: a
temporary file renamed over it) under that lock, so a commit writes O(its line) bytes
amortised, never O(rules). Opening (the dispatcher's first use, under its lock) also
rewrites the log when its tail is torn (so the next line never joins a torn one),
migrates the cursor files of older versions (`<key>.json`, the whole cursor with its
`pending`: each becomes a line, and a batch file for its pending records, then the
`.json` goes; where a `.json` and a line both exist, the line is newer) and removes
orphans.

What a SIGKILL leaves, for cursor.py's guarantees: a batch file is complete before its
line exists, so the last line of each key names a whole batch or none; a kill before
the line leaves the previous state (the batch is collected and numbered again, the
orphan removed); a kill after it re-sends the named batch. Writes are not fsynced: as
for every state file here, a process kill is survived, not a power cut.

Readers (this writer at its opening, and other processes: `ways status`, retention,
`verify`'s heads) read through cursorread.py.
"""

from __future__ import annotations

import _thread  # not threading: the blocking path's imports (dispatch/blocking.py)
import os

from .. import jsoncore
from . import secure
from .cursorread import (
    BATCH,
    LOG,
    batch_name,
    legacy_states,
    list_names,
    parse_log,
    read_batch,
    read_bytes,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMPACT_FLOOR = 256 << 10  # the log is never compacted below this size


class CursorLog:
    """The dispatcher's writer of the session's cursor log (the module docstring); its
    workers share it. A pending batch is never changed in place: a new batch is a new
    list, which is how `save` knows to write a batch file."""

    def __init__(self, folder: str, root: str) -> None:
        self.folder, self.root = folder, root
        self.path = folder + "/" + LOG
        self.lock = _thread.allocate_lock()
        self.fd = -1
        self.size = 0  # the log's bytes
        self.lines: dict[str, bytes] = {}  # each key's last line
        self.live = 0  # their total size
        self.batches: dict[str, tuple[str, list[Any]]] = {}  # key: (token, its records)
        self.broken = False  # an append failed: rewrite before the next one

    # --- opening: migrate, repair, clean ------------------------------------------------

    def _open(self) -> None:
        secure.ensure_private_dir(self.folder, self.root)
        raw = read_bytes(self.path) or b""
        states = parse_log(raw)
        names = list_names(self.folder)
        legacy = legacy_states(self.folder, names, states)
        for key, st in legacy.items():
            recs = st.get("pending")
            recs = [recs] if isinstance(recs, dict) else recs  # a cursor from before batching
            st["batch"] = self._write_batch(key, recs) if recs and isinstance(recs, list) else None
            states[key] = {k: v for k, v in st.items() if k != "pending"}
        for key, st in states.items():
            self._remember(key, _line(key, st))
            if st.get("batch"):
                self.batches[key] = (str(st["batch"]), [])
        torn = bool(raw) and not raw.endswith(b"\n")
        if legacy or torn or len(raw) > self._bound():
            self._rewrite()
        else:
            self._reopen()
            self.size = len(raw)
        for name in names:
            key = name[: -len(".json")]
            if name.endswith(".json") and key in states and "." in key:
                _unlink(self.folder + "/" + name)  # migrated (now, or before a kill)
            elif name.endswith(BATCH):
                key, _, token = name[: -len(BATCH)].rpartition(".")
                if self.batches.get(key, ("",))[0] != token:
                    _unlink(self.folder + "/" + name)  # an orphan
            elif name.startswith("." + LOG + ".") and name.endswith(".tmp"):
                _unlink(self.folder + "/" + name)  # a compaction cut short

    def _reopen(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        self.fd = secure.open_private(self.path, flags, self.root)

    def _bound(self) -> int:
        return max(COMPACT_FLOOR, 2 * self.live)

    def _remember(self, key: str, line: bytes) -> None:
        self.live += len(line) - len(self.lines.get(key, b""))
        self.lines[key] = line

    def _rewrite(self) -> None:
        """Compact: one line per key, atomically (under `lock`, or while opening)."""
        data = b"".join(self.lines.values())
        secure.replace_private(self.path, data, self.root)
        self.size, self.broken = len(data), False
        self._reopen()

    # --- the workers' side --------------------------------------------------------------

    def load(self, key: str) -> dict[str, Any] | None:
        """The rule's cursor with its pending batch read; None when it has none. A batch
        file that cannot be read (only a hand that removed or mangled it gets there)
        leaves `pending` None and `unreadable` true: the caller logs it."""
        with self.lock:
            if self.fd < 0:
                self._open()
            line = self.lines.get(key)
            token = self.batches.get(key, ("",))[0]
        if line is None:
            return None
        st: dict[str, Any] = jsoncore.loads(line)
        del st["rule"]
        st["pending"] = None
        if token:
            recs = read_batch(self.folder, key, token)
            if recs is None:
                st["unreadable"] = True
            else:
                st["pending"] = recs
                with self.lock:
                    self.batches[key] = (token, recs)
        return st

    def save(self, key: str, st: dict[str, Any], encode: Callable[[], bytes]) -> None:
        """Record the rule's cursor `st`; `encode` gives its pending batch's file bytes,
        asked for only when the batch is a new one (a batch file written first)."""
        with self.lock:
            if self.fd < 0:
                self._open()
            old = self.batches.get(key)
        recs = st.get("pending") or None
        token = old[0] if old and recs is not None and old[1] is recs else None
        fresh = None
        if recs is not None and token is None:
            token = fresh = self._write_batch(key, encode())
        head = {k: v for k, v in st.items() if k != "pending"}
        line = _line(key, {**head, "batch": token})
        prev = self.lines.get(key)
        try:
            with self.lock:
                if self.broken or self.size + len(line) > self._bound():
                    self._remember(key, line)
                    self._rewrite()
                else:
                    secure.write_all(self.fd, line)
                    self.size += len(line)
                    self._remember(key, line)
                if recs is None:
                    self.batches.pop(key, None)
                else:
                    self.batches[key] = (str(token), recs)
        except BaseException:
            with self.lock:
                self.broken = True  # a partial line, maybe: the next save rewrites the log
                if prev is not None:
                    self._remember(key, prev)  # this change did not happen
            if fresh is not None:
                _unlink(self.folder + "/" + batch_name(key, fresh))
            raise
        if old is not None and old[0] != token:
            _unlink(self.folder + "/" + batch_name(key, old[0]))

    def _write_batch(self, key: str, data: Any) -> str:
        """A new batch file (O_EXCL under a fresh token), whole; its token."""
        if isinstance(data, list):  # migrating an older cursor's records
            data = b"".join(jsoncore.dumps(r, separators=(",", ":")).encode() + b"\n" for r in data)
        token = os.urandom(6).hex()
        path = self.folder + "/" + batch_name(key, token)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        fd = secure.open_private(path, flags, self.root)
        try:
            secure.write_all(fd, data)
        except BaseException:
            os.close(fd)
            _unlink(path)
            raise
        os.close(fd)
        return token

    def close(self) -> None:
        with self.lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1


def _line(key: str, st: dict[str, Any]) -> bytes:
    return jsoncore.dumps({"rule": key, **st}, separators=(",", ":")).encode() + b"\n"


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
