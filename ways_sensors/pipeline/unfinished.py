"""What becomes of a record a rule cannot finish (project, mask, chain): one rule for all.

`at_least_once` means a record is never counted `lost`. Finishing can fail before any
delivery is tried: masking overruns its bound (redact.MaskTimeout: a 9 MiB lockfile
on a loaded machine), the redaction key is refused (redact.KeyRefused: a restore left
it 0640 and it is not ours to repair), or the record's shape defeats a stage
(RecursionError, a value no stage foresaw). For an `at_least_once` rule each of these
either holds the record or parks it; a `best_effort` rule counts it `lost`, as it
counts a failed attempt.

    cause          at_least_once                             counted
    mask_timeout   held and tried again, with twice the      retries; after MASK_TRIES
                   masking bound each time (MASK_FIRST,      tries: parked withheld,
                   never less than the rule's timeout, up    rejected
                   to MASK_CAP)
    key_refused    held and tried again with the delivery    retries (never parked: the
                   backoff until the key can be used         key is the user's to fix;
                   (`ways status` says why it is refused)    the rule waits, owing)
    anything else  parked withheld at once (the same         rejected
                   record fails the same way every time)

Masking time is not delivery time: an `at_least_once` rule's masking gets its own
bound (`mask_budget`), and its `timeout` bounds only the attempt; a `best_effort` rule
masks within its timeout. A held record stops the rule's batch before
it (the records before it go out), and the rule waits as it waits for a consumer that
is down: the worker backs off (`retrying`), the dispatcher may exit owing, and the
resumer brings it back (resume.py).

Parked withheld: the record cannot be finished, so what the consumer would have
received cannot be written either, and its text is never parked unmasked. The dead
letter (delivery.py) holds the record's envelope (section, seq, session, agent,
times, hook event) with `data` replaced by `{"withheld": <cause>}`, numbered and
chained in the rule's order like any parked record; `dispatch.record_withheld` is
logged (content-free). The journal's copy goes with the session, as after any park.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..config.rules import LoadedRule
from ..state import events
from ..targets.base import Outcome, permanent
from . import delivery
from .stages import finish

if TYPE_CHECKING:
    from ..state.counters import Tally

MASK_FIRST = 30.0  # seconds: the first masking bound (or the rule's timeout, if longer)
MASK_CAP = 480.0  # the longest masking bound
MASK_TRIES = 4  # 30, 60, 120, 240 s: then the record is parked withheld
ENVELOPE = (
    "schema",
    "section",
    "seq",
    "session_id",
    "agent",
    "agent_id",
    "agent_type",
    "timestamp",
    "project",
    "hook_event",
)


def cause_of(exc: BaseException) -> str:
    """mask_timeout, key_refused or the exception's class name."""
    from ..redact import KeyRefused, MaskTimeout

    if isinstance(exc, MaskTimeout):
        return "mask_timeout"
    if isinstance(exc, KeyRefused):
        return "key_refused"
    return type(exc).__name__


def mask_budget(rule: LoadedRule, tries: int) -> float:
    """Seconds the masking of one record may take at its `tries`-th try (0: the first).
    A best_effort rule masks within its own timeout: a record it cannot mask in time is
    lost like one its consumer did not take in time, and hostile text never holds it."""
    if not rule.at_least_once:
        return rule.spec.timeout_s
    first = max(MASK_FIRST, rule.spec.timeout_s)
    return float(min(first * 2**tries, max(MASK_CAP, first)))


def park_now(cause: str, tries: int) -> bool:
    """Whether a record held `tries` times for `cause` is parked now (else tried again)."""
    if cause == "key_refused":
        return False
    if cause == "mask_timeout":
        return tries >= MASK_TRIES
    return True


def withheld(record: dict[str, Any], cause: str) -> dict[str, Any]:
    """The record's envelope with its data withheld: what is parked in its place."""
    out = {k: record[k] for k in ENVELOPE if k in record}
    out["data"] = {"withheld": cause}
    return out


def outcome(cause: str) -> Outcome:
    """The outcome a withheld record is parked with (dead letter `cause`/`reason`)."""
    return permanent("error", "unfinished: " + cause)


def park(
    rule: LoadedRule,
    record: dict[str, Any],
    cause: str,
    seq: int,
    prev: str,
    session: str,
    tally: Tally,
) -> str | None:
    """Park `record` withheld as the rule's `seq`-th record, chained after `prev`;
    the chain head after it, or None when it could not be parked (a full disk)."""
    stub, head = finish(withheld(record, cause), rule, seq, prev)
    if not delivery.park(rule, [stub], outcome(cause), session, "dispatch"):
        return None
    tally.count("rejected")
    events.log(
        "dispatch.record_withheld",
        sensor=rule.sensor,
        rule=rule.name,
        session=session,
        cause=cause,
        rule_seq=seq,
    )
    return head
