"""A pending batch finished under an older rule is finished again before it goes out.

A worker's pending batch (cursor.py) holds each record exactly as the consumer receives
it: projected, masked and chained when the batch was committed. The rule can change
while the batch waits (a consumer that is down, an attempt in flight when the sensor
file is edited): `redact: none` tightened to `fields: metadata` must not let the up to
`max_records` records already waiting go out in full and unmasked.

So the cursor keeps, with `pending`, the fingerprint of how its records were finished
(`finished_as`: the rule's `fields`, `redact` and `chain`). A worker that finds a
pending batch whose fingerprint is not its rule's finishes each record again under the
rule as it is now, from the record as it was pending:

    project   the current `fields` over what was pending
    mask      the current `redact` (masking what is masked already changes nothing)
    seal      the chain again, from the batch's first `prev` (or the cursor's head
              when the older rule did not chain), so the batch still links to what
              the consumer already has; `rule_seq`s are kept

Because it starts from what was pending, not from the journal, the batch is never sent
more openly than the older rule finished it nor than the current rule allows: after a
tightening it is exactly what the current rule makes of the record (what was pending
was the whole record, or what the older rule kept of it); after a loosening it goes out
as the older, tighter rule left it (the text it removed is not brought back). Where the
rule's selection (`sections`, `where`) changed, the pending batch keeps its records:
they were the rule's when they were taken.

A record that cannot be finished again follows unfinished.py's rule, as at the first
finishing: a refused key keeps the whole batch pending under its older fingerprint and
the worker backs off (never sent as it was, never parked); anything else (a mask
overrun under the first masking bound, a hostile shape) parks the record withheld
(its envelope, `data: {"withheld": cause}`) and the rest of the batch goes on.
`dispatch.pending_refinished` is logged (content-free: how many records, how many
withheld).

A cursor written before this existed has no fingerprint: its batch is taken as finished
under the current rule (the version that wrote it did not know better).
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

import msgspec

from ..config.rules import LoadedRule
from ..pipeline import unfinished
from ..pipeline.stages import finish
from ..state import events

if TYPE_CHECKING:
    from ..state.counters import Tally
    from ..state.cursorstate import Cursor


def fingerprint(rule: LoadedRule) -> str:
    """How the rule finishes a record: its `fields`, `redact` and `chain`, hashed."""
    r = rule.spec
    text = msgspec.json.encode([r.fields, r.redact, r.chain])
    return hashlib.sha256(text).hexdigest()[:16]


def stale(st: Cursor, rule: LoadedRule) -> bool:
    """The cursor's pending batch was finished under another fingerprint."""
    was = st.finished_as
    return bool(st.pending) and isinstance(was, str) and was != fingerprint(rule)


def again(rule: LoadedRule, st: Cursor, session: str, tally: Tally) -> bool:
    """Finish the cursor's pending batch again under `rule` (the module docstring), in
    `st`: the caller saves it. False when the batch must wait as it is (a refused key,
    a withheld record that could not be parked): the caller backs off."""
    pending = st.pending or []
    first = pending[0].get("chain") if pending else None
    prev = first.get("prev", st.hash) if isinstance(first, dict) else st.hash
    kept: list[dict[str, Any]] = []
    withheld = lost = checkpoints = 0
    for rec in pending:
        if rec.get("section") == "checkpoint" and "chain" not in rec:
            checkpoints += 1  # a chained batch's signed checkpoint: sealed anew (sealer.py)
            continue
        base = {k: v for k, v in rec.items() if k not in ("chain", "redactions")}
        seq = int(rec.get("rule_seq") or 0)
        try:
            deadline = time.monotonic() + unfinished.mask_budget(rule, 0)
            done, prev = finish(base, rule, seq, prev, bool(rec.get("test")), deadline)
        except Exception as exc:  # unfinished.py's rule, as at the first finishing
            cause = unfinished.cause_of(exc)
            if not rule.at_least_once:
                lost += 1  # as a best_effort record that cannot be finished always is
                continue
            if cause == "key_refused":
                _log(rule, session, "dispatch.record_held", cause=cause, tries=1)
                return False
            # parked before the batch changes (the caller saves it): twice at worst
            head = unfinished.park(rule, base, cause, seq, prev, session, tally)
            if head is None:
                return False
            prev, withheld = head, withheld + 1
            continue
        kept.append(done)
    tally.count("lost", lost)
    st.pending, st.hash, st.finished_as = kept or None, prev, fingerprint(rule)
    _log(
        rule,
        session,
        "dispatch.pending_refinished",
        records=len(pending) - checkpoints,
        withheld=withheld,
        lost=lost,
    )
    return True


def _log(rule: LoadedRule, session: str, kind: str, **fields: object) -> None:
    events.log(kind, sensor=rule.sensor, rule=rule.name, session=session, **fields)
