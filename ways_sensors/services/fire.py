"""Firing a test record: one `test: true` record through a rule's real dispatch path.

The record is built from a hook payload as the agent sends it, or a bare `data`
object (by default the agent adapter's example payload for the section), and goes through the same
`finish` (masking, a chain of its own) and delivery.attempt (target and watchdog) as
every other path, but not into the counters and never into a dead-letter file: a fire
is a test. `ways sensors fire` and the sensors tab's `f` both come through here.

What a fire does, plainly:
* Each fire is a session of its own, `ways-fire-<UTC time>-<random>`: its records are
  marked `test: true` and chained from rule_seq 1, so a chained file it writes to (a
  shared one, or the rule's per-session path) still passes `ways sensors verify`, and
  it never enters a real session's chain.
* `where` is not applied: the record goes to each rule whatever its conditions say
  (FireResult.where says whether the rule has any), since a fire tests the target.
* Disabled rules (or every rule of a disabled sensor) are skipped unless asked for
  (`include_disabled`; the CLI's --include-disabled, the tab's `f` on one rule's row).
* One vocabulary with the README and the tab: each attempt is `delivered`, `refused`
  (the consumer said no or could not be reached; retryable or permanent), `timed out`,
  or `unconfirmed`: sent where no acknowledgement can come (syslog over UDP), so
  nothing says it arrived and a fire cannot claim it did.
  `delivered` means a request reached the consumer and was accepted, for every target
  and section: a traces rule (otlp, `signal: traces`) gets the record(s) and a
  `session_end` of the fire's own session in one attempt, so a complete test span
  goes out (a tool call alone opens a span and sends nothing); an attempt that sent
  nothing all the same is reported refused, never delivered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import agents
from ..config.layers import Catalog, load
from ..config.rules import LoadedRule
from ..config.spec import SECTIONS
from ..errors import UsageError
from ..fleet.identity import current
from ..pipeline import delivery
from ..pipeline.stages import finish
from ..records import WAY_EVENT, Draft, envelope, way_event
from ..targets import ACCEPTED, ERROR
from ..targets.base import permanent

SESSION = "ways-fire"  # the prefix of every fire's own session id


def session_id() -> str:
    """A fresh session for one fire: its chain starts at rule_seq 1, alone."""
    import os

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{SESSION}-{stamp}-{os.urandom(4).hex()}"


@dataclass(frozen=True)
class FireResult:
    """One attempt's outcome: accepted, retryable or permanent, with its cause (timeout,
    refused, error), a content-free detail, how long it took and when it ended."""

    rule: str  # sensor/rule
    outcome: str
    cause: str | None
    detail: str
    retry_after: float | None
    killed: bool
    duration_ms: float
    timeout_s: float
    at: float = 0.0  # unix time the attempt ended
    where: bool = False  # the rule has `where` conditions (not applied by a fire)
    session_id: str = ""
    unconfirmed: bool = False  # sent, but no acknowledgement can come (syslog udp)

    @property
    def accepted(self) -> bool:
        """The consumer accepted it: a request arrived and was answered yes."""
        return self.outcome == ACCEPTED and not self.unconfirmed

    @property
    def result(self) -> str:
        """`delivered`, `unconfirmed`, `timed out` or `refused`: the README's and the
        tab's words."""
        if self.accepted:
            return "delivered"
        if self.unconfirmed:
            return "unconfirmed"
        return "timed out" if self.cause == "timeout" else "refused"

    def describe(self) -> str:
        """`delivered`, `timed out`, `unconfirmed (why)` or `refused (why,
        retryable|permanent)`."""
        if self.result == "unconfirmed":
            return f"unconfirmed ({self.detail})"
        if self.result != "refused":
            return self.result
        why = (
            self.detail
            if self.cause == "refused"
            else ": ".join(x for x in (self.cause, self.detail) if x)
        )
        return f"refused ({why}, {self.outcome})" if why else f"refused ({self.outcome})"

    def as_json(self) -> dict[str, Any]:
        """One entry of `ways sensors fire --json` (stable; `at` is not part of it)."""
        return {
            "rule": self.rule,
            "result": self.result,
            "outcome": self.outcome,
            "cause": self.cause,
            "detail": self.detail,
            "retry_after": self.retry_after,
            "killed": self.killed,
            "duration_ms": self.duration_ms,
            "timeout_s": self.timeout_s,
            "where_applied": False,
            "has_where": self.where,
            "session_id": self.session_id,
        }


@dataclass(frozen=True)
class Fired:
    records: list[dict[str, Any]]  # every record built, as the consumer receives it
    results: list[FireResult] = field(default_factory=list)  # empty on a dry run
    skipped: list[str] = field(default_factory=list)  # disabled rules not fired

    @property
    def accepted(self) -> bool:
        return all(r.accepted for r in self.results)

    @property
    def failed(self) -> bool:
        """One attempt was refused or timed out (not merely unconfirmed)."""
        return any(not r.accepted and not r.unconfirmed for r in self.results)


def drafts(section: str, data: dict[str, Any]) -> list[Draft]:
    """The section's drafts from a hook payload (or a bare `data` object)."""
    ts = time.time_ns()
    adapter = agents.adapter(agents.DEFAULT)
    event = adapter.event_of(data)
    if section == "queued_message" or not event:
        body = data if not event else {"text": data.get("text", "")}
        from ..state.events import iso_utc

        return [Draft(section, event or "WaysFire", iso_utc(ts), body)]
    if event == WAY_EVENT:
        made = way_event(data, ts)
    elif event in adapter.EVENTS:
        made = adapter.offline_drafts(data, ts)
    else:
        raise UsageError(f"{event!r} is not a hook event {adapter.NAME} sends")
    return [d for d in made if d.section == section]


def fire(
    target: str,
    section: str,
    data: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
    dry_run: bool = False,
    cat: Catalog | None = None,
    include_disabled: bool = False,
) -> Fired:
    """Fire `section` at `target` (sensor, or sensor/rule): every rule of it selecting
    the section gets the record(s); `dry_run` builds them and stops before dispatch.
    `data` may be a callable, read only once the target is known to be right (so a bad
    target is reported before stdin is waited for)."""
    if section not in SECTIONS:
        raise UsageError(f"unknown section {section!r}: one of {', '.join(SECTIONS)}")
    cat = cat if cat is not None else load()
    sensor_name, _, rule_name = target.partition("/")
    sensor = cat.sensors.get(sensor_name)
    if sensor is None or (rule_name and rule_name not in sensor.rules):
        raise UsageError(f"no sensor or rule {target!r}", hint="`ways sensors list`")
    rules = [
        r
        for n, r in sensor.rules.items()
        if (not rule_name or n == rule_name) and section in r.spec.sections
    ]
    if not rules:
        raise UsageError(f"no rule of {target} selects {section}")
    skipped = []
    if not include_disabled:
        on = [r for r in rules if sensor.spec.enabled and r.spec.enabled]
        skipped = [r.label for r in rules if r not in on]
        if not on:
            raise UsageError(
                f"{target}: every rule selecting {section} is disabled",
                hint="--include-disabled fires them anyway",
            )
        rules = on
    if data is None:
        data = agents.adapter(agents.DEFAULT).example(section)
    made = drafts(section, data() if callable(data) else data)
    if not made:
        raise UsageError(f"the input gives no {section} record")
    try:
        fired = _send(rules, made, cat.project, dry_run)
        fired.skipped.extend(skipped)
        return fired
    finally:
        for rule in rules:  # a fire is one-shot: its thread may end (the tab's workers)
            delivery.close(rule)


def traces(rule: LoadedRule) -> bool:
    """The rule sends spans (otlp, `signal: traces`): a record alone may open a span
    and send nothing."""
    return getattr(rule.spec.dispatch.target, "signal", None) == "traces"


def _closed(made: list[Draft]) -> list[Draft]:
    """The drafts, then a session_end of the fire's own session unless they end with one:
    every span they open ends with it, so the attempt sends a complete trace."""
    if made and made[-1].section == "session_end":
        return made
    example = agents.adapter(agents.DEFAULT).example("session_end")
    return made + drafts("session_end", example)


def _send(rules: list[LoadedRule], made: list[Draft], project: str, dry_run: bool) -> Fired:
    from ..pipeline.chain import GENESIS

    records: list[dict[str, Any]] = []
    results: list[FireResult] = []
    sid = session_id()
    for rule in rules:
        prev = GENESIS
        batches: list[list[dict[str, Any]]] = []
        for i, d in enumerate(_closed(made) if traces(rule) else made, 1):
            rec = envelope(d, i, sid, project, identity=current())
            out, prev = finish(rec, rule, i, prev, test=True)
            records.append(out)
            batches.append([out])
        if traces(rule):  # one attempt: the span and its end together
            batches = [[r for b in batches for r in b]]
        for batch in batches if not dry_run else ():
            t0 = time.monotonic()
            outcome = delivery.attempt(rule, batch, session=sid, tally=None, origin="fire")
            if outcome.held:  # nothing reached the consumer: not a delivery
                outcome = permanent(ERROR, "no request sent: the span is still open")
            ms = (time.monotonic() - t0) * 1000
            results.append(
                FireResult(
                    rule.label,
                    outcome.status,
                    outcome.cause or None,
                    outcome.detail,
                    outcome.retry_after,
                    outcome.killed,
                    round(ms, 1),
                    rule.spec.timeout_s,
                    time.time(),
                    bool(rule.spec.where),
                    sid,
                    outcome.unconfirmed,
                )
            )
    return Fired(records, results)
