"""A session's state folder: the files the dispatcher owns, and how they survive a SIGKILL.

Under `<state>/sessions/<session_id>/` (folders 0700, files 0600):

    spool/, spool.lock     the hook's hand-off (spool.py); the dispatcher deletes
                           segments its build cursor has passed
    dispatch.lock          flock'd by the live dispatcher for its whole life
    dispatcher.json        {"pid", "started"} of the live dispatcher (for `ways status`)
    journal/<n>.seg        built records (journal.py), written only by the dispatcher;
                           segments every rule passed are deleted
    build.json             {"project", "spool": [seg, off], "journal": [seg, size], "seq",
                           "ended", "trackers": {agent: builder state}}: the build
                           cursor, committed after the journal append it covers (older
                           ones hold Claude Code's state as "tracker")
    cursors/<sensor>.<rule>.json
                           {"active", "segment", "offset", "rule_seq", "hash", "pending"}:
                           one rule's position in the journal, its numbering and chain
                           head, and the finished batch being delivered (worker.py)

Elsewhere in the state root:

    pending/<session_id>   a dispatcher exited with records not yet accepted; the next
                           hook event of the session, or any session's start, restarts it
    ledger/<session_id>.json  {"seq", "rules": {"sensor/rule": [rule_seq, hash]}}: what a
                           removed session folder leaves behind, so a resumed session
                           continues its numbering and chains
    counters/<sensor>.<rule>.json  per-rule totals across sessions (counters.py)

Invariants after a SIGKILL anywhere:
* build.json names a journal size; anything beyond it was appended but not committed,
  and the next dispatcher truncates it away before building again, so every record
  in the journal is built once and numbered once.
* A cursor file is replaced atomically (temporary file, rename). It moves past a
  batch of records and stores them, numbered and chained, as `pending` in one write;
  `pending` is cleared only after the consumer accepted (at_least_once) or the one
  attempt ended (best_effort). So a kill before the write changes nothing, and a kill
  after it re-delivers the same batch with the same rule_seqs and hashes.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from . import roots
from .files import replace_atomically
from .spool import session_dir, valid_session_id


def write_json(path: str, obj: Any) -> None:
    """Replace `path` atomically with `obj` as JSON, 0600."""
    replace_atomically(path, json.dumps(obj, separators=(",", ":")))


def read_json(path: str, default: Any = None) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def rule_id(sensor: str, rule: str) -> str:
    return f"{sensor}.{rule}"


class Session:
    """Paths of one session's state, created on first use."""

    def __init__(self, session_id: str):
        if not valid_session_id(session_id):
            raise ValueError("invalid session id")
        self.id = session_id
        self.dir = session_dir(session_id)
        self.spool = os.path.join(self.dir, "spool")
        self.journal = os.path.join(self.dir, "journal")
        self.cursors = os.path.join(self.dir, "cursors")
        self.build = os.path.join(self.dir, "build.json")
        self.lock = os.path.join(self.dir, "dispatch.lock")
        self.info = os.path.join(self.dir, "dispatcher.json")

    def create(self) -> None:
        for d in (self.dir, self.spool, self.journal, self.cursors):
            roots.makedirs_private(d)

    def cursor_path(self, rid: str) -> str:
        return os.path.join(self.cursors, rid + ".json")

    # --- the pending marker and the ledger --------------------------------------------

    @staticmethod
    def pending_dir() -> str:
        return os.path.join(roots.state_root(), "pending")

    def mark_pending(self, pending: bool) -> None:
        path = os.path.join(self.pending_dir(), self.id)
        if pending:
            roots.makedirs_private(self.pending_dir())
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w"):
                pass
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def ledger_path(self) -> str:
        return os.path.join(roots.state_root(), "ledger", self.id + ".json")

    def read_ledger(self) -> dict[str, Any]:
        return read_json(self.ledger_path(), {}) or {}

    def write_ledger(self, ledger: dict[str, Any]) -> None:
        roots.makedirs_private(os.path.dirname(self.ledger_path()))
        write_json(self.ledger_path(), ledger)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def pending_sessions() -> list[str]:
    try:
        return sorted(n for n in os.listdir(Session.pending_dir()) if valid_session_id(n))
    except OSError:
        return []
