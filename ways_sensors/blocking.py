"""The blocking path: `mode: blocking` rules dispatched by the hook itself, in parallel.

All matching blocking rules of one hook event run at once, each under its own timeout,
and the hook waits for them under one shared deadline: the largest of their timeouts,
capped at 10 s. Whatever is still running then is abandoned (a command's process group
is killed by its target at its own deadline, which is never later) and the hook exits
0. So one hook event waits at most 10 s, however many rules match.

Records here are built from the payload alone, with the same builder as the dispatcher
but without the transcript (queued messages and interrupted replies are the
dispatcher's), and they carry `seq: null`: `seq` numbers the spool, which they skip.
`rule_seq` and the chain head of a blocking rule live in the session's
`cursors/<rule key>.head`, updated under `cursors/<rule key>.lock` (layout.py), since
concurrent hooks of one session (parallel tool calls) share them. Each attempt goes
through delivery.py, like the dispatcher's: an `at_least_once` dispatch that failed
for a retryable reason is appended to the spool as a `WaysRetry` entry holding the
finished record, which the dispatcher delivers as it is (same rule_seq, same hash);
one refused for good is parked in the rule's dead-letter file by the hook itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rules import LoadedRule

# after the shared deadline, how long the hook waits for its jobs to finish killing what
# they started (a command's whole tree: freeze, find, kill) and to log it; within the
# 10.1 s the hook may take at most (10 s cap + this)
GRACE = 0.08


def _site() -> None:
    if sys.flags.no_site and "yaml" not in sys.modules:
        import site

        site.main()


def run(
    session_id: str,
    event: str,
    ts_ns: int,
    project: str,
    data: bytes,
    sections: list[str],
    started: float | None = None,
    agent: str | None = None,
) -> None:
    """Dispatch the matching blocking rules; return by `started` + the shared deadline."""
    _site()  # before anything that needs site-packages (msgspec, yaml)
    from . import agents, counters, delivery, events, indexbuild, records, rules, secure, spool
    from .chain import GENESIS
    from .pipeline import finish, match
    from .session import Session, write_json
    from .spec import BLOCKING_CAP
    from .utf8 import ERRORS

    payload = records.parse_payload(data)
    if payload is None:
        events.log("blocking.unreadable_payload", hook_event=event)
        return
    blocking = rules.enabled(indexbuild.current(project), mode="blocking")
    builder = agents.adapter(agent or agents.DEFAULT).new_builder(transcript=False)
    drafts = builder.build(event, payload, ts_ns)
    envs = [records.envelope(d, None, session_id, project) for d in drafts]
    start = started if started is not None else time.monotonic()
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
    shared = start + min(BLOCKING_CAP, max(rule.spec.timeout_s for rule, _ in jobs))
    retry: list[dict[str, Any]] = []
    done = threading.Semaphore(0)

    def number(rule: LoadedRule, rec: dict[str, Any]) -> dict[str, Any]:
        layout = session.layout
        fd = secure.open_private(layout.head_lock(session_id, rule.key), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            rule_seq, prev = layout.rule_head(session_id, rule.sensor, rule.name) or (0, GENESIS)
            out, h = finish(rec, rule, rule_seq + 1, prev, deadline=shared)
            write_json(layout.head(session_id, rule.key), {"rule_seq": rule_seq + 1, "hash": h})
            return out
        finally:
            os.close(fd)

    def one(rule: LoadedRule, rec: dict[str, Any]) -> None:
        tally = counters.Tally(rule.key)
        try:
            out = number(rule, rec)
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
            if not settled:  # at_least_once and retryable: the dispatcher tries again
                retry.append({"rule": rule.key, "record": out})
        except Exception as exc:
            events.log(
                "blocking.error",
                sensor=rule.sensor,
                rule=rule.name,
                session=session_id,
                error=type(exc).__name__,
            )
        finally:
            tally.flush()
            done.release()

    threads = [threading.Thread(target=one, args=job, daemon=True) for job in jobs]
    for t in threads:
        t.start()
    finished = 0
    while finished < len(threads):
        # every target returns by its own deadline, never later than `shared`; the
        # grace only collects outcomes of targets returning at that instant
        if not done.acquire(timeout=max(0.0, shared + GRACE - time.monotonic())):
            break
        finished += 1
    if finished < len(threads):
        events.log(
            "blocking.deadline",
            session=session_id,
            hook_event=event,
            unfinished=len(threads) - finished,
            waited_ms=round((time.monotonic() - start) * 1000),
        )
    for item in list(retry):
        body = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8", ERRORS)
        spool.append(session_id, "WaysRetry", ts_ns, project, body)
    if retry:
        from . import launch

        launch.ensure_dispatcher(session_id)
