"""The blocking path: `mode: blocking` rules dispatched by the hook itself, in parallel.

All matching blocking rules of one hook event run at once, each under its own timeout,
and the hook waits for them under one shared deadline: the largest of their timeouts,
capped at 10 s. Whatever is still running then is abandoned (a command's process group
is killed by its target at its own deadline, which is never later; the hook gives the
kill GRACE to end) and the hook exits 0. So one hook event waits at most 10.5 s,
however many rules match; an at_least_once record it did not settle is handed to the
dispatcher (below).

Records here are built from the payload alone, with the same builder as the dispatcher
but without the transcript (queued messages and interrupted replies are the
dispatcher's), and they carry `seq: null`: `seq` numbers the spool, which they skip.
`rule_seq` and the chain head of a blocking rule live in the session's
`cursors/<rule key>.head`, updated under `cursors/<rule key>.lock` (layout.py), since
concurrent hooks of one session (parallel tool calls) share them. Each attempt goes
through delivery.py, like the dispatcher's: an `at_least_once` dispatch that failed
for a retryable reason is appended to the spool as a `WaysRetry` entry
(spool.RETRY_EVENT) holding the finished record, which the dispatcher delivers as it is
(same rule_seq, same hash); one refused for good is parked in the rule's dead-letter
file by the hook itself.

An `at_least_once` record is never dropped by the hook. One it could not finish
(masking overran the deadline, the redaction key was refused) or whose job had not
numbered it by the deadline is spooled as a `WaysRetry` entry holding the record as
built (`unfinished`): the dispatcher numbers, masks and chains it in the same head,
under the same lock (`redelivered`), and holds or parks it as unfinished.py says. One
numbered but not settled by the deadline goes as a finished record (the consumer may
see it twice: at least once). A job abandoned at the deadline never numbers its
record after that (`_Job`), so what the hook hands over stays true. A dispatcher
killed between numbering such a record and committing its batch numbers it again:
the consumer then sees a gap in `rule_seq`, never a loss.

What this path imports is what a matching rule needs and nothing more: it runs inside
the agent's tool call, and imports were most of its time (bench/RESULTS.md, Blocking
path cost). So no module on it imports what tests/agents/test_blocking_imports.py lists
as costly (re, json, threading, typing, dataclasses, hashlib, subprocess, msgspec,
site, ...): `_thread` stands for threading's locks, thread-locals and threads,
jsoncore.py for json, regex.py for re, plain.py for dataclasses, sha.light() for
hashlib, targets/spawn.py for subprocess.
"""

from __future__ import annotations

import _thread  # not threading (the module docstring: what this path imports)
import fcntl
import os
import time

from .. import jsoncore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..config.rules import LoadedRule
    from ..index import Index
    from ..state.counters import Tally
    from ..state.layout import Layout
    from ..state.session import Session

# after the shared deadline, how long the hook waits for its jobs to finish killing what
# they started (a command's whole tree: freeze, find, kill) and to log it. Only a job
# still running at the deadline costs it, and a loaded machine's kill takes hundreds of
# ms: a hook that left sooner would leave the command's tree running (10.5 s at most)
GRACE = 0.5


def run(
    session_id: str,
    event: str,
    ts_ns: int,
    project: str,
    data: bytes,
    sections: list[str],
    started: float | None = None,
    agent: str | None = None,
    idx: Index | None = None,
) -> None:
    """Dispatch the matching blocking rules; return by `started` + the shared deadline.
    `idx`: the index the hook decided on (read again when not given)."""
    import gc

    # a short process whose work is bounded (index.MAX_PAYLOAD, the deadline): the
    # collector's passes over the modules imported below would cost it time for nothing
    # (bench/RESULTS.md, Blocking path cost), and what it builds is freed by refcount
    gc.disable()
    from .. import sha

    sha.light()  # a few records to hash: not worth loading OpenSSL (sha.py)
    from .. import regex

    regex.light()  # masking's patterns from the cache, without `re` (regex.py)
    from .. import agents, records
    from ..config import rules
    from ..pipeline import delivery
    from ..pipeline.stages import match
    from ..state import counters, events, spool
    from ..state.layout import Layout
    from ..state.session import Session
    from ..targets.timing import BLOCKING_CAP
    from ..utf8 import ERRORS

    payload = records.parse_payload(data)
    if payload is None:
        events.log("blocking.unreadable_payload", hook_event=event)
        return
    if idx is None:
        from ..config import indexbuild

        idx = indexbuild.current(project)
    blocking = rules.blocking(idx)  # no spec.py: rules.blocking
    builder = agents.adapter(agent or agents.DEFAULT).new_builder(transcript=False)
    drafts = builder.build(event, payload, ts_ns)
    start = started if started is not None else time.monotonic()
    layout = Layout()
    joined = _joined(layout, session_id)  # the session's trace, or this hook's (below)
    from ..fleet.identity import cached  # what the last dispatcher resolved: no command here

    who = cached()
    envs = [records.envelope(d, None, session_id, project, joined, who) for d in drafts]
    jobs = []
    for n, rule in enumerate(blocking.values()):
        if time.monotonic() >= start + BLOCKING_CAP:  # `where` runs inside the cap too
            events.log("blocking.deadline", session=session_id, unevaluated=len(blocking) - n)
            break
        jobs += [(rule, rec) for rec in envs if match(rule, rec)]
    if not jobs:
        return
    session = Session(session_id)
    session.create()
    if joined is not None:
        from ..traces import joined as trace

        final = trace.settle(layout, session_id, joined)  # first writer wins
        for _, rec in jobs:
            rec["traceparent"] = final  # another hook's, when it wrote the file first
    shared = start + min(BLOCKING_CAP, max(rule.spec.timeout_s for rule, _ in jobs))
    work = [_Job(rule, rec) for rule, rec in jobs]

    def one(job: _Job) -> None:
        rule = job.rule
        tally = counters.Tally(rule.key)
        try:
            out = number(session, job, shared)
            tally.count("dispatched")
            if out.get("redactions"):
                tally.count("redactions", len(out["redactions"]))
            outcome = delivery.attempt(
                rule,
                [out],
                session=session_id,
                tally=tally,
                origin="blocking",
                not_after=shared,
            )
            settled = delivery.settle(
                rule, [out], outcome, session=session_id, tally=tally, origin="blocking"
            )
            with job.lock:  # not settled: at_least_once and retryable, the dispatcher's
                job.settled = settled
        except _Abandoned:
            pass  # handed to the dispatcher at the deadline (logged there)
        except Exception as exc:  # a mask overrun, a refused key: the dispatcher's too
            if not rule.at_least_once and job.out is None:
                tally.count("lost")  # best_effort: as a failed attempt would be
            events.log(
                "blocking.error",
                sensor=rule.sensor,
                rule=rule.name,
                session=session_id,
                error=type(exc).__name__,
            )
        finally:
            tally.flush()
            job.done.release()

    for job in work:  # threads the process does not wait for at exit (it leaves by _exit)
        job.done.acquire()
        _thread.start_new_thread(one, (job,))
    # every target returns by its own deadline, never later than `shared`; the grace
    # only collects outcomes of targets returning at that instant
    finished = sum(
        job.done.acquire(True, max(0.0, shared + GRACE - time.monotonic())) for job in work
    )
    if finished < len(work):
        events.log(
            "blocking.deadline",
            session=session_id,
            hook_event=event,
            unfinished=len(work) - finished,
            waited_ms=round((time.monotonic() - start) * 1000),
        )
    regex.save()  # what masking compiled with `re` here, for the next hook
    retry = [item for item in map(_handed_over, work) if item is not None]
    for item in retry:
        body = jsoncore.dumps(item, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", ERRORS
        )
        spool.append(session_id, spool.RETRY_EVENT, ts_ns, project, body)
    if retry:
        from . import launch

        launch.ensure_dispatcher(session_id)


def _joined(layout: Layout, sid: str) -> str | None:
    """The traceparent this hook's records carry: the session's joined trace
    (traces/joined.py: its folder's file, or a resumed session's ledger) when it has
    joined one, else this hook's own valid $TRACEPARENT, which becomes the session's
    when a rule fires (run). Without either: two failed opens and an environment lookup."""
    from ..traces import joined as trace
    from ..traces.context import normal

    return trace.read(layout, sid) or normal(os.environ.get("TRACEPARENT"))


class _Job:
    """One rule's dispatch of one record, shared by its thread and the hook's main
    thread under `lock`: once the main thread has `abandoned` it (at the deadline),
    the thread never numbers it, so what the main thread hands over stays true."""

    __slots__ = ("abandoned", "done", "lock", "out", "rec", "rule", "settled")

    def __init__(self, rule: LoadedRule, rec: dict[str, Any]) -> None:
        self.rule, self.rec = rule, rec
        self.out: dict[str, Any] | None = None  # numbered, masked, chained
        self.settled: bool | None = None  # None: no outcome (yet)
        self.abandoned = False
        self.lock = _thread.allocate_lock()
        self.done = _thread.allocate_lock()  # held while its thread runs


class _Abandoned(Exception):
    """The hook's deadline came first: the record was handed to the dispatcher."""


def number(session: Session, job: _Job, deadline: float) -> dict[str, Any]:
    """The record numbered, masked and chained in the rule's head, under its lock."""
    return _numbered(session.layout, session.id, job.rule, job.rec, deadline, job)


def _numbered(
    layout: Layout,
    sid: str,
    rule: LoadedRule,
    rec: dict[str, Any],
    deadline: float | None,
    job: _Job | None = None,
) -> dict[str, Any]:
    from ..pipeline.chain import GENESIS
    from ..pipeline.stages import finish
    from ..state.secure import open_private
    from ..state.session import write_json

    fd = open_private(layout.head_lock(sid, rule.key), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        rule_seq, prev = layout.rule_head(sid, rule.sensor, rule.name) or (0, GENESIS)
        out, h = finish(rec, rule, rule_seq + 1, prev, deadline=deadline)
        if job is None:
            write_json(layout.head(sid, rule.key), {"rule_seq": rule_seq + 1, "hash": h})
            return out
        with job.lock:
            if job.abandoned:
                raise _Abandoned
            write_json(layout.head(sid, rule.key), {"rule_seq": rule_seq + 1, "hash": h})
            job.out = out
        return out
    finally:
        os.close(fd)


def _handed_over(job: _Job) -> dict[str, Any] | None:
    """The WaysRetry entry of an at_least_once job the hook did not settle: the finished
    record when it was numbered (its attempt failed, or was cut by the deadline), else
    the record as built (finishing failed or did not end in time), which the dispatcher
    numbers, masks and chains itself (`redelivered`). None: nothing owed."""
    with job.lock:
        job.abandoned = True
        if not job.rule.at_least_once or job.settled:
            return None
        if job.out is not None:
            return {"rule": job.rule.key, "record": job.out}
        return {"rule": job.rule.key, "unfinished": job.rec}


def redelivered(
    rule: LoadedRule, session: Session, entry: dict[str, Any], tries: int
) -> dict[str, Any] | None:
    """What the dispatcher delivers for a WaysRetry entry: the finished record as the hook
    left it, or one the hook could not finish, numbered in the rule's head here (masking
    under unfinished.mask_budget; its failures raise, and the worker holds the record as
    it holds its own: unfinished.py). None for an entry that holds neither."""
    from ..pipeline import unfinished

    out = entry.get("record")
    if isinstance(out, dict):
        return out  # numbered and chained by the hook
    rec = entry.get("unfinished")
    if not isinstance(rec, dict):
        return None
    deadline = time.monotonic() + unfinished.mask_budget(rule, tries)
    return _numbered(session.layout, session.id, rule, rec, deadline)


def park_withheld(
    rule: LoadedRule, session: Session, entry: dict[str, Any], cause: str, tally: Tally
) -> bool:
    """Park a WaysRetry entry's record that cannot be finished, its data withheld and
    numbered in the rule's head (unfinished.park's rule); False on a full disk."""
    from ..pipeline import delivery, unfinished
    from ..state import events

    rec = entry.get("unfinished")
    if not isinstance(rec, dict):
        return True  # a finished record never fails to finish
    stub = _numbered(session.layout, session.id, rule, unfinished.withheld(rec, cause), None)
    if not delivery.park(rule, [stub], unfinished.outcome(cause), session.id, "dispatch"):
        return False
    tally.count("rejected")
    events.log(
        "dispatch.record_withheld",
        sensor=rule.sensor,
        rule=rule.name,
        session=session.id,
        cause=cause,
        rule_seq=stub.get("rule_seq"),
    )
    return True
