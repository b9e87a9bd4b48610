"""Delivery: one attempt of one rule's records under its deadline, counted and logged;
what becomes of a failed one; and the dead-letter files.

Every path that sends records anywhere goes through `attempt`: the dispatcher's
workers, the blocking hook path and `ways sensors fire`. The target (targets/<kind>.py)
makes the attempt; this module turns its outcome into counters (counters.Tally), one
content-free events.log line per failure (`<origin>.<cause>`), and, through `settle`,
into what the rule does next.

The outcomes (targets/base.py's Outcome); [cause] names the events.log kind and, on
the right, the counter an attempt adds to:

    Outcome
    ├── accepted            HTTP 2xx · exit 0 · the lines written              delivered
    │   ├── [partial]       OTLP partialSuccess: `rejected` records dropped    rejected
    │   │                   by the consumer; the rest delivered, none retried
    │   ├── [held]          nothing sent: the records open a span whose end    held
    │   │                   is to come (traces); it goes with that end
    │   └── [unconfirmed]   sent, but no acknowledgement can come (syslog      unconfirmed
    │                       over UDP): nothing failed that can be seen
    ├── retryable           may pass later
    │   ├── [timeout]       the deadline passed: the request cut, the          timeouts
    │   │                   process group killed (also kills), or no time
    │   │                   left to start
    │   ├── [refused]       HTTP 408, 429, 5xx, with the server's Retry-After  refusals
    │   │                   on 429 and 503 (seconds or an HTTP date) · 401
    │   │                   and 403 (a credential, not the record) · a
    │   │                   command's non-zero exit
    │   └── [error]         connection refused or reset, DNS, TLS, a torn      errors
    │                       response · a failed fork · a full disk, an I/O
    │                       error · an exception raised inside a target · a
    │                       `${VAR}` header whose variable is unset (held
    │                       until a dispatcher runs where it is set)
    └── permanent           the same records can never pass as configured
        ├── [refused]       HTTP 4xx other than 401, 403, 408, 429 · a         refusals
        │                   redirect (never followed)
        └── [error]         a header value HTTP cannot carry · a command that  errors
                            does not exist or is not executable, a cwd that
                            is not a folder · a file path that is a folder,
                            runs through a file, or is refused by
                            permissions or a read-only file system

What `settle` makes of a failure:

    best_effort                lost (counted); the rule moves on: one attempt only
    at_least_once, retryable   a retry (counted): the worker waits the backoff, 0.25 s
                               doubling to 30 s, or the Retry-After when it is longer
                               (capped at 30 s), plus up to a quarter at random, and
                               tries again; the blocking path spools it for the
                               dispatcher. The same failure logged again and again is
                               written REPEAT_FREE times, then once a minute with
                               `repeated` (how many lines were not written)
    at_least_once, permanent   rejected (counted) and parked as a dead letter; the rule
                               moves on

Dead letters (parked records) are deadletters.py's: their file, format and bound.
"""

from __future__ import annotations

import time

from ..state import events
from ..targets import ERROR, PERMANENT, Context, Item, Outcome, get
from ..targets.base import retryable
from ..targets.timing import batch_for
from .deadletters import park as park  # settle parks; the callers' one door to it
from .stages import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ..config.rules import LoadedRule
    from ..state.counters import Tally

BACKOFF_FIRST, BACKOFF_CAP = 0.25, 30.0
FAILURE_COUNTERS = {"timeout": "timeouts", "refused": "refusals", "error": "errors"}


def attempt(
    rule: LoadedRule,
    records: Sequence[dict[str, Any]],
    *,
    session: str,
    tally: Tally | None,
    origin: str = "dispatch",
    not_after: float | None = None,
    lines: Sequence[bytes] | None = None,
) -> Outcome:
    """One attempt to deliver `records` (a batch: the worker's, or one record from the
    blocking path and `fire`) to the rule's target, under the rule's timeout and never
    past `not_after`; counted into `tally` (None: `fire`, whose test records stay out of
    the totals) and logged on failure. `lines` are the records' JSON when the caller
    has them already (the worker encodes each record once)."""
    r = rule.spec
    started = time.monotonic()
    deadline = started + r.timeout_s
    if not_after is not None:
        deadline = min(deadline, not_after)
    first = records[0]
    max_records, max_delay = batch_for(r.dispatch.kind, r.batch)
    ctx = Context(
        rule.sensor,
        rule.name,
        session_id=str(first.get("session_id", "")),
        date=str(first.get("timestamp", ""))[:10],
        max_records=max_records,
        max_delay=max_delay,
    )
    try:
        if lines is None or len(lines) != len(records):
            lines = [dumps(rec) for rec in records]
        batch = [Item(rec, line) for rec, line in zip(records, lines, strict=True)]
        outcome = get(r.dispatch.kind).deliver(r.dispatch.target, batch, ctx, deadline)
    except Exception as exc:  # a bug in a target must not stop the rule: try again later
        outcome = retryable(ERROR, type(exc).__name__)
    if outcome.accepted and outcome.held:
        if tally is not None:
            tally.count("held", records_in(records))
        return outcome
    if outcome.accepted and outcome.unconfirmed:
        if tally is not None:  # no failure seen: the health's last send, not a delivery
            tally.count("unconfirmed", records_in(records))
            tally.delivered(time.time_ns())
        return outcome
    if outcome.accepted:
        dropped = min(max(outcome.rejected, 0), len(records))
        if tally is not None:
            tally.count("delivered", records_in(records) - dropped)
            tally.count("rejected", dropped)
            tally.delivered(time.time_ns())
        if dropped:  # the consumer dropped part of the batch: counted, logged, not retried
            events.log(
                f"{origin}.partial",
                sensor=rule.sensor,
                rule=rule.name,
                session=session,
                rule_seq=first.get("rule_seq"),
                records=records_in(records),
                rejected=dropped,
                detail=outcome.detail,
            )
        return outcome
    if tally is not None:
        tally.count(FAILURE_COUNTERS.get(outcome.cause, "errors"))
        tally.failed(time.time_ns(), outcome.detail or outcome.cause or ERROR)
        if outcome.killed:
            tally.count("kills")
    repeated = _repeats(origin, rule, session, (outcome.status, outcome.detail, first))
    if repeated is None:
        return outcome  # the same failure again, within REPEAT_EVERY: counted, not written
    events.log(
        f"{origin}.{outcome.cause or ERROR}",
        sensor=rule.sensor,
        rule=rule.name,
        session=session,
        rule_seq=first.get("rule_seq"),
        records=records_in(records),
        outcome=outcome.status,
        duration_ms=round((time.monotonic() - started) * 1000),
        detail=outcome.detail,
        retry_after=outcome.retry_after,
        killed=outcome.killed,
        **({"repeated": repeated} if repeated else {}),
    )
    return outcome


REPEAT_FREE = 3  # identical failure lines in a row written as they come
REPEAT_EVERY = 60.0  # then one line per this many seconds, with how many were not written
_repeat: dict[tuple[str, str, str], list[Any]] = {}  # (origin, rule, session) -> state


def _repeats(
    origin: str, rule: LoadedRule, session: str, what: tuple[str, str, dict[str, Any]]
) -> int | None:
    """How many identical failure lines were not written before this one (0: none), or
    None when this one is not written either. Identical: the same rule, session,
    outcome, detail and first record (`rule_seq`) as the line before it. A consumer
    answering at once (a 429 with `Retry-After: 0`) must not crowd every other rule's
    lines out of events.log; the `retries` and failure counters still count each."""
    status, detail, first = what
    sig = (status, detail, first.get("rule_seq"), first.get("seq"))
    key = (origin, rule.key, session)
    now = time.monotonic()
    state = _repeat.get(key)
    if state is None or state[0] != sig:
        if len(_repeat) > 4096:
            _repeat.clear()  # bounded: a forgotten state only writes one line more
        _repeat[key] = [sig, 1, 0, now]
        return 0
    state[1] += 1
    if state[1] <= REPEAT_FREE or now - state[3] >= REPEAT_EVERY:
        skipped: int = state[2]
        state[2], state[3] = 0, now
        return skipped
    state[2] += 1
    return None


def close(rule: LoadedRule) -> None:
    """Let the rule's target release what this thread's attempts hold (Target.close): a
    worker as it exits, `fire` as it ends."""
    get(rule.spec.dispatch.kind).close()


def settle(
    rule: LoadedRule,
    records: Sequence[dict[str, Any]],
    outcome: Outcome,
    *,
    session: str,
    tally: Tally,
    origin: str = "dispatch",
) -> bool:
    """True when the rule is done with `records` (accepted, lost or parked); False when
    they must be attempted again (the caller waits `next_wait`, or spools them)."""
    if outcome.accepted:
        return True
    if not rule.at_least_once:
        tally.count("lost", records_in(records))
        return True
    if outcome.permanent and park(rule, records, outcome, session, origin):
        tally.count("rejected", len(records))  # a checkpoint parked too: as status counts it
        return True
    tally.count("retries")
    return False


def records_in(records: Sequence[dict[str, Any]]) -> int:
    """Section records in a batch: a checkpoint (evidence/sealer.py), always last, is
    delivered with them but counted apart."""
    return len(records) - (bool(records) and records[-1].get("section") == "checkpoint")


def until_settled(
    rule: LoadedRule,
    records: Sequence[dict[str, Any]],
    lines: Sequence[bytes] | None,
    *,
    session: str,
    tally: Tally,
    sleep: Callable[[float], bool],
    retrying: Callable[[bool], None],
    split: bool = True,
) -> bool:
    """Attempts, backing off between them, until `settle` is done with `records` (the
    worker's loop); False when `sleep` says the worker was told to stop. `retrying` is
    told whether the rule is backing off. A permanent failure of several records
    (`split`) is tried again one record at a time: one record's trouble (a path no
    record may take, a body the consumer refuses) must not park the ones batched with it."""
    backoff = BACKOFF_FIRST
    while True:
        outcome = attempt(rule, records, session=session, tally=tally, lines=lines)
        if split and len(records) > 1 and outcome.status == PERMANENT:
            return all(
                until_settled(
                    rule, [r], None, session=session, tally=tally, sleep=sleep, retrying=retrying
                )
                for r in records
            )
        settled = settle(rule, records, outcome, session=session, tally=tally)
        tally.flush()  # the attempt's counts, before the cursor moves on
        retrying(not settled)
        if settled:
            return True
        if sleep(next_wait(backoff, outcome)):
            return False
        backoff = min(backoff * 2, BACKOFF_CAP)


JITTER = 0.25  # up to this fraction of a wait is added at random


def next_wait(backoff: float, outcome: Outcome) -> float:
    """The wait before the next attempt: the consumer's Retry-After, never shorter than
    our own backoff (a `Retry-After: 0`, or a date in the past, would otherwise bring a
    retry storm: hundreds of requests a second), at most BACKOFF_CAP; plus up to
    JITTER of it at random, so many sessions' workers do not retry in step. (random is
    imported here: a blocking hook that never retries does not pay its load.)"""
    import random

    wait = backoff
    if outcome.retry_after is not None:
        wait = max(backoff, min(outcome.retry_after, BACKOFF_CAP))
    return wait * (1.0 + JITTER * random.random())
