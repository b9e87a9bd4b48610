"""A session end for sessions that die: `session_end` with `reason: "lost"`.

A client that is killed (SIGKILL, a crash, a closed machine) sends no SessionEnd, so
without this its consumers would never see the session end. When a session's
dispatcher is about to exit idle, `end_if_lost` (handed the session's journal, spool
folder, builders and cost tally, never the dispatcher) checks, in this order:

1. no session end was built (the journal's `ended`; it also keeps this to once);
2. the newest hook entry of an agent in the spool is older than the idle period;
3. the client is gone: the spool header's `ppid` (the hook's parent, which is the
   client because `ways reconcile` wires the hook with `exec`) names no live process,
   or one started after that hook ran (a reused pid), or a zombie. Entries that name
   no parent, or several different parents (a hook wired without `exec` has a shell
   of its own each time), leave the client unknown: no end is made up for it;
4. its session file (the payload's transcript path) has not grown for the idle period
   (a client writes it for a moment after its last hook: the dispatcher stays until
   it has been quiet that long, and gives up after WAIT_IDLES idle periods).

Then it builds the agent's end event through the session's own builder (so replies
the transcript still holds come out first, as at a real end), marks those records
`hook_event: null`, gives the `session_end` `synthesized: true` and `last_seen` (the
newest hook entry's time), commits them to the journal with `ended` set: the
dispatcher drains them like a real end and exits. A session resumed later starts a
new dispatcher, and its real SessionEnd is recorded as usual.

A client that is still alive when its dispatcher exits idle (a person away from an
interactive session) gets nothing here; if it dies later, its session's end is made
up only when the session's dispatcher runs again.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import agents, records
from ..state import events, spool
from ..state.events import iso_utc
from . import pricing
from .journal import Journal

if TYPE_CHECKING:
    from ..agents.protocols import SessionBuilder

BuilderFor = Callable[[str], "SessionBuilder | None"]  # the session's builder for an agent

OWN_EVENTS = frozenset({records.WAY_EVENT, spool.RETRY_EVENT})  # ways' own spool entries
PARENTS_CHECKED = 8  # the newest agent entries whose parents must agree
SLACK_NS = 2 * 10**9  # /proc start times are coarse
WAIT_IDLES = 4  # a dead client's file still growing after this many idle periods: not lost


def end_if_lost(
    journal: Journal, spool_dir: str, idle: float, builder_for: BuilderFor, cost: pricing.Tally
) -> bool:
    """Whether the dispatcher must not exit idle yet: True when it appended a made-up
    session end (to drain), or when the client is gone but its session file grew within
    the idle period (to look again; for at most WAIT_IDLES idle periods)."""
    if journal.ended:
        return False
    newest = _newest_entries(spool_dir)
    if not newest:
        return False
    last = newest[-1][0]
    now = time.time_ns()
    idle_ns = int(idle * 1e9)
    if now - last.ts_ns < idle_ns or not _client_gone(newest):
        return False
    face = agents.face(last.agent)
    payload = records.parse_payload(last.payload) or {}
    if face is None or not face.END_EVENT:
        return False
    path = payload.get(face.TRANSCRIPT_FIELD.decode()) if face.TRANSCRIPT_FIELD else None
    if isinstance(path, str) and path:
        try:
            if now - os.stat(path).st_mtime_ns < idle_ns:
                # written after the last hook: wait for it to go quiet, then decide
                return now - last.ts_ns < WAIT_IDLES * idle_ns
        except OSError:
            pass
    drafts = _drafts(journal.session_id, builder_for(last.agent), last, face, payload, now)
    cost.apply(drafts)
    journal.stage_drafts(drafts, last.project)
    journal.ended = True
    journal.commit()
    events.log("dispatch.session_lost", session=journal.session_id, records=len(drafts))
    return True


def _drafts(
    sid: str,
    builder: SessionBuilder | None,
    last: spool.Entry,
    face: Any,
    payload: dict[str, Any],
    now: int,
) -> list[records.Draft]:
    """The agent's end event built by the session's builder, marked as made up."""
    end = {
        face.SESSION_FIELD.decode(): sid,
        face.EVENT_FIELD.decode(): face.END_EVENT,
        "reason": "lost",
    }
    for key in (face.TRANSCRIPT_FIELD, b"cwd"):
        if key and key.decode() in payload:
            end[key.decode()] = payload[key.decode()]
    try:
        drafts = builder.build(face.END_EVENT, end, now, -1) if builder else []
    except Exception as exc:  # the end must go out even if the transcript is hostile
        events.log("dispatch.build_error", session=sid, error=type(exc).__name__)
        drafts = []
    if not any(d.section == "session_end" for d in drafts):
        drafts.append(records.Draft("session_end", "", iso_utc(now), {"reason": "lost"}))
    for d in drafts:
        d.hook_event = None  # type: ignore[assignment]  # no hook event made these
        if d.section == "session_end":
            extra = d.data.pop("extra", None)
            d.data.update(synthesized=True, last_seen=iso_utc(last.ts_ns))
            if extra is not None:
                d.data["extra"] = extra
    return drafts


def _newest_entries(spool_dir: str) -> list[tuple[spool.Entry, int | None]]:
    """The newest agent hook entries (up to PARENTS_CHECKED), oldest first, each with
    the `ppid` of its header."""
    for name in reversed(spool.segment_names(spool_dir)):
        try:
            with open(os.path.join(spool_dir, name), "rb") as f:
                data = f.read()
        except OSError:
            continue
        found = []
        for _, _, body in spool.scan_frames(data):
            entry = spool.parse_entry(body, name)
            if entry is None or entry.event in OWN_EVENTS or entry.agent not in agents.AGENTS:
                continue
            found.append((entry, _ppid(body)))
        if found:
            return found[-PARENTS_CHECKED:]
    return []


def _ppid(body: bytes | None) -> int | None:
    try:
        value = json.loads((body or b"").partition(b"\n")[0]).get("ppid")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else None


def _client_gone(entries: list[tuple[spool.Entry, int | None]]) -> bool:
    parents = {ppid for _, ppid in entries}
    if len(parents) != 1 or None in parents:
        return False  # no parent recorded, or a new one each time: not the client
    pid = parents.pop()
    return pid is not None and not _alive(pid, entries[-1][0].ts_ns)


def _alive(pid: int, hook_ns: int) -> bool:
    """Whether `pid` is a live process that already ran when the hook did."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    except OSError:
        return False
    stat = _proc_stat(pid)
    if stat is None:
        return True  # no /proc: existence is all there is to know
    state, started_ns = stat
    if state in ("Z", "X"):
        return False  # a zombie is a dead client nobody reaped yet
    return started_ns is None or started_ns <= hook_ns + SLACK_NS


def _proc_stat(pid: int) -> tuple[str, int | None] | None:
    """(state, start time in ns since the epoch) from Linux's /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
    if len(fields) < 20:
        return None
    state = fields[0]
    try:
        ticks = int(fields[19])
        with open("/proc/stat", "rb") as f:
            boot = next(
                int(line.split()[1]) for line in f.read().splitlines() if line.startswith(b"btime")
            )
        started = (boot * 10**9) + ticks * 10**9 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration):
        started = None
    return state, started
