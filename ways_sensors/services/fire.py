"""Firing a test record: one `test: true` record through a rule's real dispatch path.

The record is built from a hook payload as the agent sends it, or a bare `data`
object (by default the agent adapter's example payload for the section), and goes through the same
`finish` (masking, a chain of its own) and delivery.attempt (target and watchdog) as
every other path, but not into the counters and never into a dead-letter file: a fire
is a test. Fire records carry session id `ways-fire`, so they never enter a real
session's chain. `ways sensors fire` and the sensors tab's `f` both come through here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import agents, delivery
from ..errors import UsageError
from ..layers import Catalog, load
from ..pipeline import finish
from ..records import WAY_EVENT, Draft, envelope, way_event
from ..rules import LoadedRule
from ..spec import SECTIONS
from ..targets import ACCEPTED

SESSION = "ways-fire"


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

    @property
    def accepted(self) -> bool:
        return self.outcome == ACCEPTED

    def as_json(self) -> dict[str, Any]:
        """One entry of `ways sensors fire --json` (stable; `at` is not part of it)."""
        return {
            "rule": self.rule,
            "outcome": self.outcome,
            "cause": self.cause,
            "detail": self.detail,
            "retry_after": self.retry_after,
            "killed": self.killed,
            "duration_ms": self.duration_ms,
            "timeout_s": self.timeout_s,
        }


@dataclass(frozen=True)
class Fired:
    records: list[dict[str, Any]]  # every record built, as the consumer receives it
    results: list[FireResult] = field(default_factory=list)  # empty on a dry run

    @property
    def accepted(self) -> bool:
        return all(r.accepted for r in self.results)


def drafts(section: str, data: dict[str, Any]) -> list[Draft]:
    """The section's drafts from a hook payload (or a bare `data` object)."""
    ts = time.time_ns()
    adapter = agents.adapter(agents.DEFAULT)
    event = adapter.event_of(data)
    if section == "queued_message" or not event:
        body = data if not event else {"text": data.get("text", "")}
        from ..events import iso_utc

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
    if data is None:
        data = agents.adapter(agents.DEFAULT).example(section)
    made = drafts(section, data() if callable(data) else data)
    if not made:
        raise UsageError(f"the input gives no {section} record")
    try:
        return _send(rules, made, cat.project, dry_run)
    finally:
        for rule in rules:  # a fire is one-shot: its thread may end (the tab's workers)
            delivery.close(rule)


def _send(rules: list[LoadedRule], made: list[Draft], project: str, dry_run: bool) -> Fired:
    records: list[dict[str, Any]] = []
    results: list[FireResult] = []
    for rule in rules:
        for i, d in enumerate(made, 1):
            rec = envelope(d, i, SESSION, project)
            out, _ = finish(rec, rule, i, "0" * 64, test=True)
            records.append(out)
            if dry_run:
                continue
            t0 = time.monotonic()
            outcome = delivery.attempt(rule, [out], session=SESSION, tally=None, origin="fire")
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
                )
            )
    return Fired(records, results)
