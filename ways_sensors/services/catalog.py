"""Every sensor and rule across the layers, described for people: `ways sensors list`
and the sensors tab's table.

A rule row names its layer and file, its effective state (the sensor's `enabled` and
its own), sections, the `where` condition in a short form, target and destination,
mode, timeout, delivery, chain, redact, its field projection (`fields`: all, metadata
or projected), whether records and whether session content may leave the machine, and
whether it still waits for its preview. Project sensors the user has not allowed are
listed as refused, with why; files the spec refuses are listed with their first error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..config.layers import Catalog, LoadedSensor, Problem, load
from ..config.lint import content_off_machine, destination, off_machine
from ..config.projection import describe
from ..config.rules import LoadedRule
from ..state import previews
from ..state.layout import rule_label

SHORT_OPS = {
    "equals": "=",
    "not": "!=",
    "in": " in ",
    "contains": " contains ",
    "like": " like ",
    "matches": " ~ ",
    "above": " > ",
    "below": " < ",
}


@dataclass(frozen=True)
class RuleRow:
    sensor: str
    name: str
    layer: str
    file: str
    enabled: bool  # in effect: the sensor's and the rule's own `enabled`
    own_enabled: bool  # the rule's own `enabled`, what toggling the rule changes
    sections: tuple[str, ...]
    condition: str  # `where` in short form, "" when the rule has none
    target: str  # file, http, command
    destination: str
    mode: str
    timeout: float
    delivery: str
    chain: bool
    redact: str
    fields: str  # all, metadata or projected
    off_machine: bool  # records may leave this machine
    content_off_machine: bool  # and the projection keeps session content in them
    waiting: bool  # created by a command, preview never seen: enabling it is refused

    @property
    def id(self) -> str:
        return rule_label(self.sensor, self.name)

    def as_json(self) -> dict[str, Any]:
        """One rule of `ways sensors list --json` (its docstring names the stable shape)."""
        return {
            "name": self.name,
            "layer": self.layer,
            "file": self.file,
            "enabled": self.enabled,
            "sections": list(self.sections),
            "target": self.target,
            "destination": self.destination,
            "mode": self.mode,
            "timeout": self.timeout,
            "delivery": self.delivery,
            "chain": self.chain,
            "redact": self.redact,
            "off_machine": self.off_machine,
            "fields": self.fields,
            "content_off_machine": self.content_off_machine,
        }

    @property
    def off_text(self) -> str:
        """`no`, `content`, or `no content` (off the machine, projected to no free text)."""
        if not self.off_machine:
            return "no"
        return "content" if self.content_off_machine else "no content"


@dataclass(frozen=True)
class SensorRow:
    name: str
    layer: str
    file: str
    files: tuple[tuple[str, str], ...]  # (layer, file), lowest layer first
    enabled: bool
    description: str
    rules: tuple[RuleRow, ...]

    @property
    def shipped_only(self) -> bool:
        """Read-only: no user or project file of its own to rename or delete."""
        return all(layer == "shipped" for layer, _ in self.files)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layer": self.layer,
            "file": self.file,
            "files": [{"layer": layer, "file": f} for layer, f in self.files],
            "enabled": self.enabled,
            "description": self.description,
            "rules": [r.as_json() for r in self.rules],
        }


@dataclass(frozen=True)
class Refused:
    """A project sensor that does not load, or a file the spec refuses."""

    name: str | None
    layer: str | None
    file: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "layer": self.layer, "file": self.file, "reason": self.reason}


@dataclass(frozen=True)
class Listing:
    project: str
    project_allowed: bool
    sensors: tuple[SensorRow, ...]
    refused: tuple[Refused, ...]
    errors: tuple[Problem, ...]

    def sensor(self, name: str) -> SensorRow | None:
        return next((s for s in self.sensors if s.name == name), None)

    def as_json(self) -> dict[str, Any]:
        """`ways sensors list --json`."""
        return {
            "project": self.project,
            "project_allowed": self.project_allowed,
            "sensors": [s.as_json() for s in self.sensors],
            "refused": [r.as_json() for r in self.refused],
            "errors": [p.as_json() for p in self.errors],
        }


def _short_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def condition(where: dict[str, Any] | None, match: str = "all") -> str:
    """`where` for a table cell: `tool_name=Bash and input.command ~ rm`. Paths lose
    their `data.` prefix; each operator becomes its sign or word."""
    if not where:
        return ""
    parts = []
    for key, cond in where.items():
        path = key[5:] if key.startswith("data.") else key
        if isinstance(cond, dict) and len(cond) == 1:
            op, arg = next(iter(cond.items()))
            parts.append(f"{path}{SHORT_OPS.get(op, f' {op} ')}{_short_value(arg)}")
        else:
            parts.append(f"{path}={_short_value(cond)}")
    return (" or " if match == "any" else " and ").join(parts)


def rule_row(sensor: LoadedSensor, rule: LoadedRule) -> RuleRow:
    r = rule.spec
    return RuleRow(
        sensor=sensor.name,
        name=rule.name,
        layer=rule.layer,
        file=rule.path,
        enabled=bool(sensor.spec.enabled and r.enabled),
        own_enabled=bool(r.enabled),
        sections=tuple(r.sections),
        condition=condition(r.where, r.match),
        target=r.dispatch.kind,
        destination=destination(rule),
        mode=r.mode,
        timeout=r.timeout_s,
        delivery=r.delivery,
        chain=r.chain,
        redact=r.redact if isinstance(r.redact, str) else "default+" + ",".join(r.redact.kinds),
        fields=describe(r.fields),
        off_machine=off_machine(rule),
        content_off_machine=content_off_machine(rule),
        waiting=previews.waiting(rule.label),
    )


def sensor_row(sensor: LoadedSensor) -> SensorRow:
    return SensorRow(
        name=sensor.name,
        layer=sensor.layer,
        file=sensor.path,
        files=tuple((src.layer, src.path) for src in sensor.sources),
        enabled=sensor.spec.enabled,
        description=sensor.spec.description,
        rules=tuple(rule_row(sensor, r) for r in sensor.rules.values()),
    )


def listing(project: str | None = None, cat: Catalog | None = None) -> Listing:
    """Every sensor of `project` (default: the hook's project) across the layers."""
    cat = cat if cat is not None else load(project)
    refused = tuple(
        Refused(p.sensor, p.layer, p.path, p.message)
        for p in cat.problems
        if p.layer == "project" and p.severity == "warning" and "refused" in p.message
    )
    return Listing(
        project=cat.project,
        project_allowed=cat.project_allowed,
        sensors=tuple(sensor_row(s) for s in cat.sensors.values()),
        refused=refused,
        errors=tuple(cat.errors),
    )
