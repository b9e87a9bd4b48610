"""Every path under the state root, one spelling of a rule id, one way to read a chain head.

The root is explicit: `Layout(root)`, or `Layout()` for the XDG one (roots.state_root,
`${XDG_STATE_HOME:-~/.local/state}/agent-ways`), so a test or an in-process crash case
passes a folder instead of changing the environment. It is on the hook's fast path, so
it imports nothing but `roots` (`posix` and `sys`), and `json` only inside the head
readers.

Folders are 0700 and files 0600, every one (they hold session content, or say which
sessions ran), and every writer makes, opens and checks them through secure.py: the
root is the user's and 0700 (repaired, or refused when it is another user's or a link),
a link is never followed, a file must be a regular one of ours. `<sid>` is a session
id (`valid_session_id`), `<key>` a rule key (`rule_key`). Each entry: path, owning
module; who writes and who deletes it; what a SIGKILL of a writer at any instant leaves.

    sessions/<sid>/                     session.py
        made by the session's first writer (hook, blocking path, `ways sensors emit`);
        removed by the dispatcher once the session ended and everything is delivered,
        or by any dispatcher's start once nothing wrote in it for
        `ways.retention.abandoned_after` (retention.py). SIGKILL: kept; the next
        dispatcher resumes from it.
    sessions/.gone-<sid>-<pid>/         session.py
        a finished session's folder on its way out: renamed here in one step, then
        removed (so a late dispatcher finds no folder at `sessions/<sid>`). SIGKILL:
        left; the retention sweep removes it once it is an hour old.
    sessions/<sid>/spool/<n>.seg        spool.py (its format)
        appended by the hook, `ways sensors emit` and the blocking path; a segment the
        build passed is deleted by the dispatcher. SIGKILL: complete frames intact, a
        torn tail reads as "not yet written".
    sessions/<sid>/spool.lock           spool.py
        flock'd by each spool writer for one append, and by the dispatcher before it
        removes the folder. SIGKILL: an empty file; the flock dies with its holder.
    sessions/<sid>/dispatch.lock        dispatcher.py (launch.py probes it)
        flock'd by the live dispatcher for its whole life. SIGKILL: as spool.lock.
    sessions/<sid>/dispatcher.json      dispatcher.py
        {"pid", "started"}, replaced atomically at start. SIGKILL: a stale pid (`ways
        status` believes only the lock).
    sessions/<sid>/build.json           dispatcher.py (format: session.py)
        the build cursor, replaced atomically after each journal append; positions, ids
        and keyed digests, never content (the agent's tracker state says how). SIGKILL:
        the previous cursor; the next dispatcher cuts the journal back to its end.
    sessions/<sid>/trace.json           traces/joined.py (its format)
        the client's trace the session joined, written once (the dispatcher or a
        blocking rule's hook, first writer wins), never replaced. SIGKILL: whole or absent.
    sessions/<sid>/journal/<n>.seg      journal.py (its format)
        appended by the dispatcher; a segment every worker passed is deleted.
        SIGKILL: bytes past the committed end, cut away by the next dispatcher.
    sessions/<sid>/cursors/cursors.log, <key>.<token>.batch   cursorlog.py (formats)
        every worker's cursor, a line appended per change by the dispatcher (compacted
        past a bound); a batch file per pending batch, while in flight. SIGKILL: the
        last whole line per rule; its pending batch is sent again, same rule_seqs.
    sessions/<sid>/cursors/<key>.leaves, .checkpoint   evidence/sealer.py (formats)
    sessions/<sid>/cursors/<key>.head   blocking.py
        a blocking rule's {"rule_seq", "hash"}, replaced atomically by the hook under
        <key>.lock. SIGKILL: the last head written.
    sessions/<sid>/cursors/<key>.lock   blocking.py
        flock'd by the hook while it numbers a record. SIGKILL: as spool.lock.
    pending/<sid>                       session.py (its format)
        {"rules", "since"} (empty from older versions); written in place when a
        dispatcher exits owing records, removed when one exits owing none (or by
        retention.py, with its session); the hook restarts the session's dispatcher
        while it exists, and the resumer (resume.py) at other sessions' starts. The hook
        stats it on every event no rule wants, its path spelled in hook.pending_marker
        (a test keeps the spellings equal). SIGKILL: as the last dispatcher left it.
    resume/resume.lock                  resume.py
        flock'd by the one resumer running, probed by the hook at a session start.
        SIGKILL: as spool.lock.
    resume/backoff.json                 resume.py
        {rule key (or "@<sid>"): {"due", "tries"}}: when each owed rule's consumer is
        next tried, replaced atomically by the resumer. SIGKILL: the previous backoff.
    resume/next                         resume.py
        the earliest time (epoch seconds, ASCII) an owed session is next due, written
        by the resumer as it exits; the hook reads it. SIGKILL: the previous time.
    refused.json                        refusals.py (its format, writers, readers)
    spool-faults.json                   spoolread.py
        {"torn", "corrupt"}: spool frames the dispatchers skipped (spool.py), rewritten
        in place under an flock. SIGKILL: as counters.
    ledger/<sid>.json                   session.py
        {"seq", "rules": {label: [rule_seq, hash]}} (and build.json's "trackers" when
        retention.py removed it), written atomically by the dispatcher (or retention.py)
        before it removes the session folder; the oldest past retention.LEDGER_MAX
        sessions are deleted at a dispatcher start.
        SIGKILL: absent or whole, and the folder is removed only after it is written.
    links/<digest>.json                 agents/claude_code/links.py
        {"session_id", "ts_ns"}: a session ended by /clear, for the session that starts
        next in the same transcript folder (digest: sha256 of that folder, 32 hex);
        replaced atomically, read once. SIGKILL: absent or whole.
    counters/<key>.json                 counters.py
        per-rule totals, rewritten in place under an flock by workers and the blocking
        path; never deleted. SIGKILL: a kill mid-rewrite can lose the totals (never a
        record).
    deadletters/<key>.jsonl             deadletters.py
        records refused for good, appended (one write per batch) by workers and the
        hook; the user's to clear. SIGKILL: a torn last line at worst.
    locks/<digest>.lock                 files.py
        a config file's lock (sensor files, config.yaml, the agent's settings; the digest
        is files.py's hash of the locked path), flock'd by its writer; never deleted
        (files.py says why). SIGKILL: as spool.lock.
    events.log, events.log.1            events.py
        one content-free JSON line per event, one O_APPEND write each, by everyone;
        past events.LOG_MAX it becomes events.log.1. SIGKILL: whole lines only.
    errors.log, errors.log.1            errorlog.py
        the CLI's unexpected errors, one write per entry, rotated past errors.LOG_MAX.
        SIGKILL: whole entries only.
    keys/                               evidence/keys.py (formats; SIGKILL)
    machine-log/, machine-log.json, machine-log.lock   evidence/machinelog.py
        the machine log's tiles and checkpoint (tiles.py), its committed size, its lock;
        written by dispatchers, never deleted. SIGKILL: tiles of a size not committed,
        written again by the next append.
    redaction.key                       redact.py
        32 random bytes, created O_EXCL by the first process that masks; never deleted.
        SIGKILL: a kill between its creation and its write leaves it short.
    previews.json                       previews.py
        which command-made rules still wait for `ways sensors test`, rewritten in place
        under an flock. SIGKILL: as counters.
    taps/                               taps.py
        <pid>.tap and <pid>.jsonl: a live tap's registration and the records offered to
        it; removed by the tap as it ends, or by the next tap once its process is gone.
        SIGKILL: whole lines only.
"""

from .. import roots
from ..roots import posix
from ..roots import valid_session_id as valid_session_id  # ids are path components here

STATE_FILE_CAP = 256 << 20  # a cursor may hold a pending record (see verify.LINE_CAP)
SMALL_STATE_CAP = 1 << 20  # a .head or a ledger: a few numbers per rule
GONE_PREFIX = ".gone-"  # a session folder being removed (a "." never starts a session id)
_REG = 0o100000  # S_IFREG, without the stat module


def rule_key(sensor: str, rule: str) -> str:
    """`sensor.rule`: the rule's id in file names and internal tables (the index,
    counters, dead letters, a WaysRetry entry's `rule`). Sensor and rule names never
    hold `.` or `/` (spec.NAME_PATTERN), so both spellings split unambiguously."""
    return sensor + "." + rule


def rule_label(sensor: str, rule: str) -> str:
    """`sensor/rule`: the rule's id as users read and type it, and in JSON documents
    (the ledger's `rules`, previews.json, `ways status`)."""
    return sensor + "/" + rule


def split_rule_key(key: str) -> tuple[str, str]:
    sensor, _, rule = key.partition(".")
    return sensor, rule


def split_rule_label(label: str) -> tuple[str, str]:
    sensor, _, rule = label.partition("/")
    return sensor, rule


def read_state(path: str, cap: int = STATE_FILE_CAP) -> object:
    """A JSON state file, or None: missing, a link, not a regular file, larger than
    `cap`, or not JSON (however hostile: deep nesting is a RecursionError, caught). A
    file whose JSON value is followed by a tail gives that value: the tail is what a
    killed in-place rewrite left (files.update_json_locked)."""
    from .cursorread import read_bytes  # stdlib only, as this module

    raw = read_bytes(path, cap)
    if raw is None:
        return None
    from .. import jsoncore

    try:
        return jsoncore.loads(raw)
    except ValueError:  # a killed in-place rewrite (files.update_json_locked): its head
        try:
            return jsoncore.Decoder().raw_decode(raw.decode("utf-8", "replace").lstrip())[0]
        except (ValueError, RecursionError):
            return None
    except RecursionError:
        return None


def head_pair(value: object) -> "tuple[int, str] | None":
    """(rule_seq, hash) of a stored head ({"rule_seq", "hash", ...} or [rule_seq, hash]);
    None when it is not one."""
    if isinstance(value, dict):
        value = [value.get("rule_seq"), value.get("hash")]
    if isinstance(value, list) and len(value) == 2:
        seq, h = value
        if type(seq) is int and seq >= 0 and isinstance(h, str):  # `type`: never a bool
            return seq, h
    return None


class SessionHead:
    """A rule's head in a live session folder. `pending` is the cursor's record still
    being delivered (numbered and chained, maybe not yet written); None for a `.head`."""

    def __init__(self, rule_seq: int, hash: str, kind: str, pending: object = None) -> None:
        self.rule_seq = rule_seq
        self.hash = hash
        self.kind = kind  # "head" (a blocking rule's) | "cursor" (a worker's)
        self.pending = pending


def _listdir(path: str) -> "list[str]":
    """The names in a state folder; none when it is missing or a link (never followed)."""
    flags = posix.O_RDONLY | posix.O_CLOEXEC
    flags |= getattr(posix, "O_DIRECTORY", 0) | getattr(posix, "O_NOFOLLOW", 0)
    try:
        fd = posix.open(path, flags)
    except OSError:
        return []
    try:
        return sorted(posix.listdir(fd))
    except OSError:
        return []
    finally:
        posix.close(fd)


class Layout:
    """The paths under one state root (see the table above)."""

    __slots__ = ("root",)

    def __init__(self, root: "str | None" = None) -> None:
        self.root = (root or roots.state_root()).rstrip("/") or "/"

    def __repr__(self) -> str:
        return "Layout(%r)" % self.root

    def _at(self, *parts: str) -> str:
        return self.root + "/" + "/".join(parts)

    # --- files of the root -------------------------------------------------------------

    def events_log(self) -> str:
        return self._at("events.log")

    def errors_log(self) -> str:
        return self._at("errors.log")

    def keys_dir(self) -> str:  # evidence/keys.py
        return self._at("keys")

    def redaction_key(self) -> str:
        return self._at("redaction.key")

    def previews(self) -> str:
        return self._at("previews.json")

    def taps_dir(self) -> str:
        return self._at("taps")

    def lock(self, digest: str) -> str:
        """A config file's lock; `digest` is files.py's hash of the locked path."""
        return self._at("locks", digest + ".lock")

    def counters_dir(self) -> str:
        return self._at("counters")

    def counters(self, key: str) -> str:
        return self._at("counters", key + ".json")

    def deadletters_dir(self) -> str:
        return self._at("deadletters")

    def deadletters(self, key: str) -> str:
        return self._at("deadletters", key + ".jsonl")

    def pending_dir(self) -> str:
        return self._at("pending")

    def pending_marker(self, sid: str) -> str:
        return self._at("pending", _checked(sid))

    def pending_sessions(self) -> "list[str]":
        return [n for n in _listdir(self.pending_dir()) if valid_session_id(n)]

    def links_dir(self) -> str:
        return self._at("links")

    def link_note(self, digest: str) -> str:
        return self._at("links", digest + ".json")

    def resume_dir(self) -> str:
        return self._at("resume")

    def resume_lock(self) -> str:
        return self._at("resume", "resume.lock")

    def resume_backoff(self) -> str:
        return self._at("resume", "backoff.json")

    def resume_next(self) -> str:
        return self._at("resume", "next")

    def spool_faults(self) -> str:
        return self._at("spool-faults.json")

    def ledger_dir(self) -> str:
        return self._at("ledger")

    def ledger(self, sid: str) -> str:
        return self._at("ledger", _checked(sid) + ".json")

    def ledger_sessions(self) -> "list[str]":
        out = []
        for name in _listdir(self.ledger_dir()):
            sid = name[: -len(".json")]
            if name.endswith(".json") and valid_session_id(sid):
                out.append(sid)
        return out

    # --- one session's folder -----------------------------------------------------------

    def sessions_dir(self) -> str:
        return self._at("sessions")

    def sessions(self) -> "list[str]":
        return [n for n in _listdir(self.sessions_dir()) if valid_session_id(n)]

    def session_dir(self, sid: str) -> str:
        return self._at("sessions", _checked(sid))

    def spool_dir(self, sid: str) -> str:
        return self.session_dir(sid) + "/spool"

    def spool_lock(self, sid: str) -> str:
        return self.session_dir(sid) + "/spool.lock"

    def dispatch_lock(self, sid: str) -> str:
        return self.session_dir(sid) + "/dispatch.lock"

    def dispatcher_info(self, sid: str) -> str:
        return self.session_dir(sid) + "/dispatcher.json"

    def build_cursor(self, sid: str) -> str:
        return self.session_dir(sid) + "/build.json"

    def journal_dir(self, sid: str) -> str:
        return self.session_dir(sid) + "/journal"

    def cursors_dir(self, sid: str) -> str:
        return self.session_dir(sid) + "/cursors"

    def cursor_log(self, sid: str) -> str:
        """Every worker's cursor, a line per change (cursorlog.py)."""
        return self.cursors_dir(sid) + "/cursors.log"

    def leaves(self, sid: str, key: str) -> str:  # evidence/sealer.py
        return self.cursors_dir(sid) + "/" + key + ".leaves"

    def head(self, sid: str, key: str) -> str:
        """A blocking rule's head, {"rule_seq", "hash"}, numbered by the hook."""
        return self.cursors_dir(sid) + "/" + key + ".head"

    def head_lock(self, sid: str, key: str) -> str:
        return self.cursors_dir(sid) + "/" + key + ".lock"

    def cursor_rules(self, sid: str) -> "list[tuple[str, str]]":
        """(sensor, rule) of every rule with a cursor or a head in the session."""
        from .cursorread import read_states  # the log's rules, and older `.json` cursors'

        keys = set(read_states(self.cursors_dir(sid)))
        keys.update(n[:-5] for n in _listdir(self.cursors_dir(sid)) if n.endswith(".head"))
        return [split_rule_key(k) for k in sorted(keys)]

    def session_head(self, sid: str, sensor: str, rule: str) -> "SessionHead | None":
        """The rule's head in the live session folder: its `.head` (which wins: a
        blocking rule's `.json` only tracks redelivery), else its worker cursor when
        that numbered anything; None otherwise."""
        key = rule_key(sensor, rule)
        pair = head_pair(read_state(self.head(sid, key), SMALL_STATE_CAP))
        if pair:
            return SessionHead(pair[0], pair[1], "head")
        from .cursorread import read_cursor

        cur = read_cursor(self.cursors_dir(sid), key)
        pair = head_pair(cur)
        if not pair or not pair[0]:
            return None  # a cursor that never numbered anything: the ledger (if any) stands
        pending = cur.get("pending") if isinstance(cur, dict) else None
        return SessionHead(pair[0], pair[1], "cursor", pending)

    def ledger_head(self, sid: str, sensor: str, rule: str) -> "tuple[int, str] | None":
        """The rule's head in what a removed session folder left (its ledger)."""
        ledger = read_state(self.ledger(sid), SMALL_STATE_CAP)
        rules = ledger.get("rules") if isinstance(ledger, dict) else None
        return head_pair(rules.get(rule_label(sensor, rule))) if isinstance(rules, dict) else None

    def rule_head(self, sid: str, sensor: str, rule: str) -> "tuple[int, str] | None":
        """The head the session's next record of the rule chains to: the live folder's,
        else the ledger's; None when the rule never numbered a record in the session."""
        h = self.session_head(sid, sensor, rule)
        return (h.rule_seq, h.hash) if h else self.ledger_head(sid, sensor, rule)


def _checked(sid: str) -> str:
    if not valid_session_id(sid):
        raise ValueError("invalid session id")
    return sid
