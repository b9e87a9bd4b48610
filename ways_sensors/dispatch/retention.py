"""How long the state root keeps what it holds: the retention sweep, and its size.

What is removed, and by whom (layout.py has every path):

* A finished session's folder: by its own dispatcher, once the session ended and every
  record is delivered (dispatcher.py `_remove_if_quiet`); its ledger stays.
* An abandoned session's folder (a session that never ended: the agent was killed, the
  machine slept through it): by `sweep`, which every dispatcher runs once, at its first
  quiet moment (dispatcher.py: after the backlog it started with, at most 30 s in). A
  folder nothing wrote in for `ways.retention.abandoned_after` (config.yaml; a duration
  such as `12h`, `7d`, `2w` or seconds, at least MIN_AGE; default DEFAULT_AGE), whose
  dispatcher is not running, whose spool no hook holds and which owes nothing, gets its
  ledger written (so a resumed session goes on numbering its chains), then loses its
  folder; `retention.session_removed` is logged with its age and its size.
* Never a session that owes records, however old (`owes`): one with a pending marker
  (a dispatcher exited owing `at_least_once` records), a batch pending in a cursor,
  journal records a rule's cursor has not passed, or spool frames not yet built (a
  dispatcher was killed). It is kept, `retention.session_kept` is logged, and one
  without a marker gets one, so the resumer (resume.py) starts its dispatcher at a
  later session start; it goes once that dispatcher delivered what it owed, or once
  the rules owed are removed or disabled (a removed rule owes nothing). There is no age
  past which owed records are given up: a consumer down for a month gets them when it
  comes back (README, "Retention").
* Ledger entries beyond LEDGER_MAX sessions, oldest first (`retention.ledger_pruned`,
  with the count): a session resumed after its entry is gone starts its chains again
  at rule_seq 1, and `verify --rule` no longer expects its records.
* Pending markers of sessions without a folder, temporary files a SIGKILL left in
  the ledger folder, and a finished session's folder a SIGKILL left on its way out
  (`sessions/.gone-*`, layout.py), each once TMP_AGE old.
* A dead-letter file (deadletters.py; its rotated `.1` too) nothing was parked in for
  DEAD_LETTER_AGE, or for `abandoned_after` when that is longer: removed under its
  flock, `retention.dead_letters_removed` logged with the rule and the records given up.
* events.log is rotated by events.py (past events.LOG_MAX), errors.log by errors.py.

The sweep is bounded: at most SCAN_MAX session folders looked at (SCAN_ENTRIES entries
each) and REMOVE_MAX removed per dispatcher run. It never raises: a failure is logged
(`retention.error`) and the dispatcher goes on. `usage` is what `ways status` shows: the
bytes, files and sessions under the state root.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from typing import Any

from ..config import userconfig
from ..state import cursorstate, events, secure, spool
from ..state.layout import GONE_PREFIX, Layout, rule_label
from ..state.session import Session, read_json
from .ages import STORE_KEPT, abandoned_after, parse_age
from .buildstate import BuildCursor
from .spoolread import Reader
from .usage import usage_of

LEDGER_MAX = 10_000
SCAN_MAX, SCAN_ENTRIES, REMOVE_MAX = 512, 4096, 32
TMP_AGE = 3600.0
DEAD_LETTER_AGE = 30 * 86400.0


def sweep(layout: Layout | None = None, skip: str | None = None, now: float | None = None) -> int:
    """Remove abandoned sessions (never `skip`, the caller's own), prune the ledger and
    stale markers; returns how many sessions were removed. Never raises."""
    layout = layout or Layout()
    try:
        age = abandoned_after()
        now = time.time() if now is None else now
        removed = 0
        for sid in layout.sessions()[:SCAN_MAX]:
            if removed >= REMOVE_MAX:
                break
            if sid == skip or last_touched(layout.session_dir(sid)) >= now - age:
                continue
            try:
                removed += _remove_abandoned(layout, sid, now - age, now)
            except OSError as exc:  # a refused path (secure.py), a full disk: the next one
                events.log("retention.error", session=sid, error=type(exc).__name__)
        _prune_markers(layout)
        _prune_leaving(layout, now)
        _prune_ledger(layout, now)
        _prune_dead_letters(layout, now - max(age, DEAD_LETTER_AGE))
        _prune_store(now)
        return removed
    except Exception as exc:
        events.log("retention.error", error=type(exc).__name__)
        return 0


STORE_PRUNE_TIMEOUT = 2.0  # seconds the sweep waits for the store's write lock


def _prune_store(now: float) -> None:
    """The session store's sessions whose last record is older than
    `ways.retention.store_kept` (unset: kept for good); the default store only, and only
    when it exists. Busy or broken: the next dispatcher's sweep tries again."""
    node: Any = userconfig.data()
    for key in STORE_KEPT:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        return
    try:
        kept = parse_age(node)
    except ValueError:
        events.log("store.bad_setting", key=".".join(STORE_KEPT))
        return
    from ..store import default_path
    from ..store import sqlite as store

    try:
        conn = store.connect(default_path(), timeout=STORE_PRUNE_TIMEOUT, create=False)
    except FileNotFoundError:
        return
    try:
        before = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now - kept))
        removed = store.prune(conn, before, STORE_PRUNE_TIMEOUT)
    except Exception as exc:
        events.log("store.prune_error", error=type(exc).__name__)
        return
    finally:
        conn.close()
    if removed:
        events.log("store.pruned", sessions=removed)


def last_touched(folder: str) -> float:
    """The newest mtime in `folder` and below (links not followed), from at most
    SCAN_ENTRIES entries; 0 when it cannot be read."""
    newest, seen, stack = 0.0, 0, [folder]
    while stack and seen < SCAN_ENTRIES:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        newest = max(newest, st.st_mtime)
        seen += 1
        if stat.S_ISDIR(st.st_mode):
            try:
                stack.extend(os.path.join(path, n) for n in os.listdir(path))
            except OSError:
                continue
    if stack:  # too many entries to look at all: call it busy
        return time.time()
    return newest


def _try_lock(path: str, root: str) -> int | None:
    """An exclusive flock on `path` (created), without waiting; None when it is held."""
    fd = secure.open_private(path, os.O_RDWR | os.O_CREAT, root)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _remove_abandoned(layout: Layout, sid: str, cutoff: float, now: float) -> int:
    """Write the session's ledger and remove its folder, under its dispatch and spool
    locks and if it is still untouched since `cutoff`; 1 when removed."""
    s = Session(sid, layout)
    locks: list[int] = []
    try:
        secure.ensure_private_dir(s.dir, layout.root, create=False)
        for path in (s.lock, layout.spool_lock(sid)):
            fd = _try_lock(path, layout.root)
            if fd is None:
                return 0  # a dispatcher runs, or a hook is appending: not abandoned
            locks.append(fd)
        touched = last_touched(s.dir)
        if touched >= cutoff:
            return 0
        if owes(s):
            if not os.path.lexists(layout.pending_marker(sid)):
                s.mark_pending(True)  # the resumer brings its dispatcher back
            events.log(
                "retention.session_kept",
                session=sid,
                idle_h=round((now - touched) / 3600, 1),
                owes=True,
            )
            return 0
        size = usage_of(s.dir)[0]
        s.write_ledger(_ledger(s))
        import shutil  # here: with bz2 and lzma, kept off a dispatcher's start

        shutil.rmtree(s.dir, ignore_errors=True)
        s.mark_pending(False)
    except FileNotFoundError:
        return 0
    finally:
        for fd in locks:
            os.close(fd)
    events.log(
        "retention.session_removed",
        session=sid,
        idle_h=round((now - touched) / 3600, 1),
        bytes=size,
        owes=False,
    )
    return 1


def owes(s: Session) -> bool:
    """Whether the session may still owe a consumer records: a pending marker, a batch
    pending in a cursor, an active cursor short of the journal's committed end, or
    spool frames past the build cursor. Files that cannot be read count as owing."""
    layout = s.layout
    if os.path.lexists(layout.pending_marker(s.id)):
        return True
    value = read_json(s.build, None)
    if value is None:
        return bool(spool.segment_names(layout.spool_dir(s.id)))
    build = BuildCursor.parse(value)
    if build is None or not Reader(s.id, layout).drained(*build.spool):
        return True
    try:
        cursors = cursorstate.read_all(s.cursors, strict=True)  # the log, older `.json`s
    except OSError:
        return True
    for cur in cursors.values():
        if cur is None:
            return True  # not a cursor: counted as owing
        if cur.active and (cur.in_flight or cur.position < build.journal):
            return True
    return False


def _ledger(s: Session) -> dict[str, Any]:
    """What the folder leaves behind (as dispatcher.py's `_remove_if_quiet` writes it):
    the session's `seq` and each rule's chain head; and, since the session never ended,
    its builders' state (content-free), so a session still running when it was removed
    goes on reading its transcript where it was instead of exporting it again."""
    old = s.read_ledger()
    build = read_json(s.build, {})
    seq = build.get("seq") if isinstance(build, dict) else None
    rules = dict(old.get("rules") or {})
    for sensor, rule in s.layout.cursor_rules(s.id):
        head = s.layout.session_head(s.id, sensor, rule)
        if head:
            rules[rule_label(sensor, rule)] = [head.rule_seq, head.hash]
    out = {"seq": seq if isinstance(seq, int) else int(old.get("seq", 0)), "rules": rules}
    from ..evidence.carry import ledger_trees  # each chained rule's tree, for a resume

    trees = {**(old.get("trees") or {}), **ledger_trees(s.layout, s.id)}
    if trees:
        out["trees"] = trees
    trackers = build.get("trackers") if isinstance(build, dict) else None
    if isinstance(trackers, dict) and trackers:
        out["trackers"] = trackers
    cost = build.get("cost") if isinstance(build, dict) else old.get("cost")
    if isinstance(cost, dict):  # the replies priced so far (numbers only): a resume adds on
        out["cost"] = cost
    return out


def _prune_markers(layout: Layout) -> None:
    """A pending marker whose session folder is gone restarts a dispatcher that finds
    nothing: remove it."""
    for sid in layout.pending_sessions():
        if not os.path.lexists(layout.session_dir(sid)):
            Session(sid, layout).mark_pending(False)


def _prune_leaving(layout: Layout, now: float) -> None:
    """A finished session's folder whose remover was killed after renaming it."""
    import shutil

    try:
        entries = list(os.scandir(layout.sessions_dir()))
    except (FileNotFoundError, NotADirectoryError):
        return
    for e in entries:
        if not e.name.startswith(GONE_PREFIX) or not e.is_dir(follow_symlinks=False):
            continue
        try:
            old = e.stat(follow_symlinks=False).st_mtime < now - TMP_AGE
        except FileNotFoundError:
            continue  # another dispatcher's sweep removed it: the rest of this one goes on
        if old:
            shutil.rmtree(e.path, ignore_errors=True)


def _prune_ledger(layout: Layout, now: float) -> None:
    folder = layout.ledger_dir()
    try:
        entries = [e for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return
    for e in entries:
        if e.name.endswith(".tmp") and e.stat(follow_symlinks=False).st_mtime < now - TMP_AGE:
            os.unlink(e.path)  # a SIGKILL during a ledger write left it
    ledgers = [e for e in entries if e.name.endswith(".json")]
    if len(ledgers) <= LEDGER_MAX:
        return
    secure.ensure_private_dir(folder, layout.root, create=False)
    ledgers.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime)
    extra = ledgers[: min(len(ledgers) - LEDGER_MAX, 1000)]
    for e in extra:
        os.unlink(e.path)
    events.log("retention.ledger_pruned", removed=len(extra), kept=LEDGER_MAX)


def _prune_dead_letters(layout: Layout, cutoff: float) -> None:
    """Remove the dead-letter files last written before `cutoff`, each under the flock
    parkers take (deadletters._append_bounded), so none is removed while a record goes in."""
    from ..pipeline.deadletters import count_lines

    folder = layout.deadletters_dir()
    try:
        entries = [e for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return
    for e in entries[:SCAN_MAX]:
        if not e.name.endswith((".jsonl", ".jsonl.1")):
            continue
        try:
            fd = secure.open_private(e.path, os.O_RDONLY, layout.root)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            if st.st_mtime >= cutoff or os.lstat(e.path).st_ino != st.st_ino:
                continue
            records = count_lines(e.path)
            os.unlink(e.path)
        except OSError:
            continue
        finally:
            os.close(fd)
        key = e.name.rsplit(".jsonl", 1)[0]
        events.log("retention.dead_letters_removed", rule=key, records=records)
