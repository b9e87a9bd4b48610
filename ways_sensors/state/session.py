"""A session's state folder: the files the dispatcher owns, and how they survive a SIGKILL.

Under `<state>/sessions/<session_id>/` (folders 0700, files 0600; layout.py names every
path, and holds the table of the whole state root):

    spool/, spool.lock     the hook's hand-off (spool.py); the dispatcher deletes
                           segments its build cursor has passed
    dispatch.lock          flock'd by the live dispatcher for its whole life
    dispatcher.json        {"pid", "started"} of the live dispatcher (for `ways status`)
    journal/<n>.seg        built records (journal.py), written only by the dispatcher;
                           segments every rule passed are deleted
    build.json             {"project", "spool": [seg, off], "journal": [seg, size], "seq",
                           "ended", "trackers": {agent: builder state}, "traceparent",
                           "cost": the session's replies priced so far (pricing.Tally)}:
                           the build cursor (dispatch/buildstate.py types it),
                           committed after the journal append it covers (older
                           ones hold Claude Code's state as "tracker"); a builder's state
                           holds offsets, ids and keyed digests, never content
    cursors/cursors.log    every rule's cursor, a line per change (cursorlog.py):
                           its position in the journal, its numbering and chain head;
    cursors/<key>.<token>.batch  the finished batch a rule is delivering, only while
                           it is in flight (the rule key: layout.rule_key; cursor.py)

Elsewhere in the state root:

    pending/<session_id>   a dispatcher exited with records not yet accepted; the next
                           hook event of the session restarts it, the resumer
                           (resume.py) at any session's start. {"rules": [rule keys
                           still owed], "since": epoch seconds of the first exit owing};
                           written in place (the folder's mtime says a marker was added);
                           empty from older versions (rules unknown)
    ledger/<session_id>.json  {"seq", "rules": {"sensor/rule": [rule_seq, hash]},
                           "traceparent"?: the client's trace it joined, "cost"?:
                           the session's replies priced so far, numbers only
                           (pricing.Tally), so a resumed run's session_end totals the
                           whole session} (keyed
                           by layout.rule_label; "trackers" too, as in build.json, when
                           retention.py removed a session that never ended): what a
                           removed session folder leaves behind, so a resumed session
                           continues its numbering and chains (retention.py: how long
                           folders and ledger entries are kept)
    counters/<sensor>.<rule>.json  per-rule totals across sessions (counters.py)

Invariants after a SIGKILL anywhere:
* build.json names a journal size; anything beyond it was appended but not committed,
  and the next dispatcher truncates it away before building again, so every record
  in the journal is built once and numbered once.
* A cursor moves past a batch of records and makes them, numbered and chained, its
  pending batch in one appended log line (the batch file is written whole before it);
  `pending` is cleared only after the consumer accepted (at_least_once) or the one
  attempt ended (best_effort). So a kill before the line changes nothing, and a kill
  after it re-delivers the same batch with the same rule_seqs and hashes.
"""

from __future__ import annotations

import os
import time

from .. import jsoncore
from . import secure
from .cursorlog import CursorLog
from .layout import GONE_PREFIX, Layout, read_state, rule_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def write_json(path: str, obj: Any) -> None:
    """Replace the state file `path` atomically with `obj` as JSON, 0600 (secure.py: a
    link or a file not ours at `path` is refused)."""
    secure.replace_private(path, jsoncore.dumps(obj, separators=(",", ":")).encode())


def read_json(path: str, default: Any = None) -> Any:
    """A JSON state file, or `default` (missing, a link, not a regular file, not JSON)."""
    value = read_state(path)
    return default if value is None else value


def read_pending(layout: Layout, sid: str) -> dict[str, Any]:
    """A pending marker: {"rules": [rule keys] or None (unknown: an older marker),
    "since": epoch seconds or None}; {} when there is none."""
    try:
        with open(layout.pending_marker(sid), "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return {}
    try:
        doc = jsoncore.loads(raw) if raw.strip() else {}
    except ValueError:
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    rules = doc.get("rules")
    since = doc.get("since")
    return {
        "rules": [r for r in rules if isinstance(r, str)] if isinstance(rules, list) else None,
        "since": since if isinstance(since, (int, float)) else None,
    }


class Session:
    """Paths of one session's state (under `layout`'s root), created on first use."""

    def __init__(self, session_id: str, layout: Layout | None = None):
        self.layout = layout = layout or Layout()
        self.id = session_id
        self.dir = layout.session_dir(session_id)  # ValueError for an invalid id
        self.spool = layout.spool_dir(session_id)
        self.journal = layout.journal_dir(session_id)
        self.cursors = layout.cursors_dir(session_id)
        self.build = layout.build_cursor(session_id)
        self.lock = layout.dispatch_lock(session_id)
        self.info = layout.dispatcher_info(session_id)
        self._cursor_log: CursorLog | None = None

    def create(self) -> None:
        for d in (self.spool, self.journal, self.cursors):
            secure.ensure_private_dir(d, self.layout.root)

    def cursor_log(self) -> CursorLog:
        """The session's cursor log (cursorlog.py), one for the dispatcher's workers."""
        if self._cursor_log is None:
            self._cursor_log = CursorLog(self.cursors, self.layout.root)
        return self._cursor_log

    # --- the pending marker and the ledger --------------------------------------------

    def mark_pending(self, pending: bool, rules: list[str] | None = None) -> None:
        """Leave (with the rule keys still owed) or remove the pending marker."""
        path = self.layout.pending_marker(self.id)
        if pending:
            secure.ensure_private_dir(self.layout.pending_dir(), self.layout.root)
            since = read_pending(self.layout, self.id).get("since") or time.time()
            doc = jsoncore.dumps({"rules": sorted(rules or []), "since": since})
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            with open(secure.open_private(path, flags, self.layout.root), "w") as f:
                f.write(doc)
        else:
            try:
                secure.ensure_private_dir(self.layout.pending_dir(), self.layout.root, create=False)
                secure.check_replaceable(path, self.layout.root)  # a planted link is noticed
                os.unlink(path)
            except FileNotFoundError:
                pass

    def ledger_path(self) -> str:
        return self.layout.ledger(self.id)

    def read_ledger(self) -> dict[str, Any]:
        return read_json(self.ledger_path(), {}) or {}

    def write_ledger(self, ledger: dict[str, Any]) -> None:
        secure.ensure_private_dir(self.layout.ledger_dir(), self.layout.root)
        write_json(self.ledger_path(), ledger)

    def leave(self, seq: int, ledger: dict[str, Any], trees: dict[str, Any] | None = None) -> None:
        """Write the ledger (`ledger`'s heads updated from this folder's, `seq` the last
        built, `trees` each chained rule's tree for a resume: evidence/carry.py), then
        remove the session folder; the caller holds spool.lock."""
        rules = dict(ledger.get("rules", {}))
        for sensor, rule in self.layout.cursor_rules(self.id):
            head = self.layout.session_head(self.id, sensor, rule)
            if head:
                rules[rule_label(sensor, rule)] = [head.rule_seq, head.hash]
        kept: dict[str, Any] = {"seq": seq, "rules": rules}
        trees = {**(ledger.get("trees") or {}), **(trees or {})}
        if trees:
            kept["trees"] = trees
        if ledger.get("traceparent"):  # the client's trace the session joined (dispatcher)
            kept["traceparent"] = ledger["traceparent"]
        if isinstance(ledger.get("cost"), dict):  # the session's cost so far (pricing.Tally)
            kept["cost"] = ledger["cost"]
        self.write_ledger(kept)
        self.remove()

    def remove(self) -> None:
        """Remove the session folder (checked first: never through a linked parent). It
        leaves the sessions folder in one rename before its files go: a dispatcher that
        a hook started as this one left finds no folder and exits (dispatcher.acquire),
        where a half-removed one would let it make a new lock file in it, take it and
        wait out its idle time on a session that has ended."""
        try:
            secure.ensure_private_dir(self.dir, self.layout.root, create=False)
        except FileNotFoundError:
            return
        import shutil  # here: the blocking path makes sessions and never removes one

        gone = f"{self.layout.sessions_dir()}/{GONE_PREFIX}{self.id}-{os.getpid()}"
        try:
            os.rename(self.dir, gone)
        except OSError:
            gone = self.dir
        shutil.rmtree(gone, ignore_errors=True)
