"""Why a rule would or would not receive a record: `ways sensors explain` and the tab's preview.

The records come from a hook payload, built by the agent's adapter offline (as `fire`
builds them: no transcript is read), or from a recorded session replayed by the same
adapter (`--session ID --event N` takes its Nth record, `seq` N). Each record is then
held against every rule of every layer, in the order the dispatcher would: the file
refused (its first error), the rule or its sensor disabled, the section not selected,
and then each `where` condition, evaluated as conditions.py does, naming the value it
saw (or that the path reaches no field). Nothing is dispatched and no counter moves.

A Verdict's `reason` is one short line a person reads in ten seconds:

    receives                                        the rule would get the record
    disabled                                        enabled: false (the rule or its sensor)
    section tool_call not selected (selects ...)    the record's section is not the rule's
    where data.tool_name: wants Write, saw "Bash"   the first failing condition (match: all)
    where (any): none of 2 conditions held: ...     match: any, every condition failed
    file refused: <the loader's first error>        the sensor's file is refused
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .. import agents, index
from ..config.conditions import resolve
from ..config.layers import Catalog, LoadedSensor, load
from ..config.rules import LoadedRule
from ..errors import UsageError
from ..fleet.identity import current
from ..records import WAY_EVENT, Draft, envelope, way_event
from .preview import adapter_for, transcript_for

SHOWN = 60  # characters of a value seen, in a reason


@dataclass(frozen=True)
class Failed:
    """One `where` condition that did not hold: its path, what it wants, what it saw."""

    path: str
    wants: Any
    seen: list[Any]  # every value the path reached; [] when it reaches no field

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "wants": self.wants, "seen": self.seen}

    def text(self) -> str:
        wants = self.wants
        if isinstance(wants, dict) and len(wants) == 1:
            ((op, operand),) = wants.items()
            wants = f"{op} {_short(operand)}"
        else:
            wants = _short(wants)
        seen = ", ".join(_short(v) for v in self.seen[:3]) if self.seen else "no such field"
        return f"where {self.path}: wants {wants}, saw {seen}"


@dataclass(frozen=True)
class Verdict:
    rule: str  # sensor/rule, or sensor for a refused file
    receives: bool
    reason: str
    failed: list[Failed] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "receives": self.receives,
            "reason": self.reason,
            "failed": [f.as_json() for f in self.failed],
        }


@dataclass(frozen=True)
class Explained:
    """One record and what every rule makes of it."""

    record: dict[str, Any]
    verdicts: list[Verdict]

    def as_json(self) -> dict[str, Any]:
        return {
            "section": self.record.get("section"),
            "hook_event": self.record.get("hook_event"),
            "seq": self.record.get("seq"),
            "verdicts": [v.as_json() for v in self.verdicts],
        }


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def verdict(
    sensor: LoadedSensor, rule: LoadedRule, record: dict[str, Any], as_enabled: bool = False
) -> Verdict:
    """What `rule` makes of `record`, and why (module docstring); `as_enabled` judges a
    disabled rule as if it were on (a preview)."""
    rid = rule.label
    if not as_enabled and not (sensor.spec.enabled and rule.spec.enabled):
        which = "its sensor" if not sensor.spec.enabled else "the rule"
        on = verdict(sensor, rule, record, as_enabled=True)
        then = "would receive it" if on.receives else f"would not: {on.reason}"
        return Verdict(rid, False, f"disabled ({which} says enabled: false); on, it {then}")
    section = record.get("section")
    if section not in rule.spec.sections:
        selects = ", ".join(rule.spec.sections)
        return Verdict(rid, False, f"section {section} not selected (selects {selects})")
    where = rule.spec.where or {}
    failed = []
    for cond in rule.where.conditions:
        if not cond(record):
            failed.append(
                Failed(cond.key, where.get(cond.key), list(resolve(record, cond.segments)))
            )
    if not rule.where(record):
        if rule.spec.match == "any":
            shown = "; ".join(f.text().removeprefix("where ") for f in failed[:2])
            reason = f"where (any): none of {len(failed)} conditions held: {shown}"
        else:
            reason = failed[0].text()
        return Verdict(rid, False, reason, failed)
    return Verdict(rid, True, "receives")


def explain_record(cat: Catalog, record: dict[str, Any]) -> Explained:
    """Every rule of the catalog (and every refused file) against one record."""
    out = []
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            out.append(verdict(sensor, rule, record))
    seen = set()
    for p in cat.errors:
        if p.sensor and p.path not in seen:
            seen.add(p.path)
            out.append(Verdict(p.sensor, False, f"file refused: {p.path}:{p.line}: {p.message}"))
    for src in cat.refused:
        from ..config.layers import stem

        out.append(
            Verdict(stem(src.path), False, f"file refused: project not allowed ({src.path})")
        )
    return Explained(record, out)


def drafts_of(payload: dict[str, Any], agent: str | None = None) -> list[Draft]:
    """The records a hook payload gives, built offline by the agent's adapter."""
    adapter = agents.adapter(agent or agents.DEFAULT)
    event = adapter.event_of(payload)
    ts = time.time_ns()
    if event == WAY_EVENT:
        return way_event(payload, ts)
    if not event or event not in adapter.EVENTS:
        raise UsageError(
            f"the payload names no hook event {adapter.NAME} sends"
            + (f" ({event!r})" if event else ""),
            hint="a payload as the agent sends it, with hook_event_name; --agent NAME for "
            "another agent",
        )
    return adapter.offline_drafts(payload, ts)


def explain_payload(
    payload: dict[str, Any], agent: str | None = None, cat: Catalog | None = None
) -> list[Explained]:
    cat = cat if cat is not None else load()
    made = drafts_of(payload, agent)
    if not made:
        return []
    sid = str(payload.get("session_id") or "explain")
    who = current()
    return [
        explain_record(cat, envelope(d, i, sid, cat.project, identity=who))
        for i, d in enumerate(made, 1)
    ]


def session_records(
    session: str | None = None, transcript: str | None = None, agent: str | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """(the session file, its records in seq order), replayed as `ways sensors test` does."""
    adapter = adapter_for(agent, transcript)
    path = transcript_for(session, transcript, adapter)
    replay = adapter.replay(path)
    records = [
        envelope(d, i, replay.session_id, index.project_dir(), identity=current())
        for i, d in enumerate(replay.drafts(), 1)
    ]
    return path, records


def explain_event(
    event: int,
    session: str | None = None,
    transcript: str | None = None,
    agent: str | None = None,
    cat: Catalog | None = None,
) -> Explained:
    """The session's record `seq` = event, against every rule."""
    path, records = session_records(session, transcript, agent)
    if not 1 <= event <= len(records):
        raise UsageError(f"{path} has {len(records)} record(s); --event takes 1 to {len(records)}")
    return explain_record(cat if cat is not None else load(), records[event - 1])


def missed(rule_id: str, transcript: str, agent: str | None = None) -> list[tuple[str, int]]:
    """Why the session's records did not reach `rule_id`: (reason, records), commonest
    first (the tab's preview shows them under what would be sent)."""
    from collections import Counter

    from .preview import rule_of

    cat = load()
    sensor, rule = rule_of(cat, rule_id)
    _, records = session_records(None, transcript, agent)
    reasons: Counter[str] = Counter()
    for rec in records:
        v = verdict(sensor, rule, rec, as_enabled=True)
        if not v.receives:
            reasons[v.reason] += 1
    return reasons.most_common()
