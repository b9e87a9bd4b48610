"""Finding, merging and trusting sensor files: shipped, managed, user, then project.

A later layer changes only the fields it names: mappings merge by key (rules by
name), while lists, scalars, `where` and `dispatch` are replaced whole. Each file is
applied on top of what the layers below produced and the result is validated; a file
that breaks the spec is refused alone (with its line and reason) and the sensor keeps
what the lower layers gave it. Project files load only when the project is listed in
`ways.project_sensors` of the user's config.yaml; a project file cannot add itself,
because that key is only read from the user's config, never from a sensor file.
Managed files (the administrator's, roots.managed_roots: above shipped, below user)
may lock a sensor or single rules against every file applied after them
(config/locks.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .. import index, roots
from ..roots import sensor_files as sensor_files
from .conditions import ConditionError, Where, compile_where
from .rules import LoadedRule
from .spec import NAME_RE, SensorFile, SpecError
from .specdecode import decode_sensor
from .yamlread import YamlError, position, read_yaml

REPLACED_WHOLE = frozenset({"where", "dispatch"})


@dataclass
class Problem:
    """One lint finding, an error (the file is refused) or a warning."""

    severity: str  # "error" | "warning"
    path: str
    line: int
    message: str
    sensor: str | None = None
    rule: str | None = None
    layer: str | None = None
    column: int | None = None  # 1-based, where known

    def as_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "file": self.path,
            "line": self.line,
            "column": self.column,
            "sensor": self.sensor,
            "rule": self.rule,
            "layer": self.layer,
            "message": self.message,
        }


@dataclass
class Source:
    layer: str
    path: str


@dataclass
class LoadedSensor:
    name: str
    spec: SensorFile
    sources: list[Source]
    rules: dict[str, LoadedRule]
    raw: dict[str, Any]

    @property
    def layer(self) -> str:
        return self.sources[-1].layer

    @property
    def path(self) -> str:
        return self.sources[-1].path


@dataclass
class Catalog:
    """Everything the layers give for one project: sensors, problems, refusals."""

    project: str
    project_allowed: bool
    sensors: dict[str, LoadedSensor] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    refused: list[Source] = field(default_factory=list)
    locks: dict[str, dict[str | None, str]] = field(default_factory=dict)  # config/locks.py

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


# --- discovery and merging --------------------------------------------------------


def stem(path: str) -> str:
    name = os.path.basename(path)
    return name.rsplit(".", 1)[0]


def merge(base: Any, over: Any) -> Any:
    """Layer `over` on `base`: mappings by key, everything else (and where/dispatch) whole."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    out = dict(base)
    for k, v in over.items():
        if k in REPLACED_WHOLE or k not in out:
            out[k] = v
        else:
            out[k] = merge(out[k], v)
    return out


def read_config(path: str | None = None) -> tuple[dict[str, Any], Problem | None]:
    """The user's config.yaml as a mapping, over the managed layer's (config/managed.py);
    a broken file gives {} and a problem."""
    path = path or roots.config_file()
    if path == roots.config_file():
        from . import managed

        data, problem = _read_config(path)
        _, _, broken = managed.managed()
        if broken and problem is None:
            problem = Problem("error", broken[0][0], 1, broken[0][1], layer="managed")
        return managed.effective(data), problem
    return _read_config(path)


def _read_config(path: str) -> tuple[dict[str, Any], Problem | None]:
    try:
        data, _ = read_yaml(path)
    except FileNotFoundError:
        return {}, None
    except YamlError as exc:
        return {}, Problem("error", path, exc.line, exc.message)
    except OSError as exc:
        return {}, Problem("error", path, 1, f"cannot read: {exc.strerror}")
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, Problem("error", path, 1, "config.yaml must be a mapping")
    return data, None


def canonical(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def allowed_projects(config: dict[str, Any]) -> list[str]:
    ways = config.get("ways")
    value = ways.get("project_sensors") if isinstance(ways, dict) else None
    if not isinstance(value, list):
        return []
    return [canonical(p) for p in value if isinstance(p, str) and p]


def _validate(raw: Any) -> tuple[SensorFile, dict[str, Where]]:
    sensor = decode_sensor(raw)
    wheres = {}
    for name, rule in sensor.rules.items():
        try:
            wheres[name] = compile_where(rule.where, rule.match)
        except ConditionError as exc:
            raise SpecError(exc.message, ["rules", name, "where", exc.key], "value") from None
    return sensor, wheres


def read_sensor(
    path: str,
    layer: str | None,
    base: dict[str, Any] | None = None,
    held: dict[str | None, str] | None = None,
    notes: list[Problem] | None = None,
) -> tuple[Any, Any, SensorFile, dict[str, Where]] | list[Problem]:
    """One sensor file, layered on `base` (what the layers below gave its sensor) and
    validated: (its own data, the merged data, the sensor, its compiled `where`s), or
    the Problems that refuse it: every mistake of the file, each at its line and column
    (specerrors.py). `ways sensors lint PATH` and `load` both report through here, so a
    file is refused with the same lines and messages either way. `held`: what managed
    files lock of this sensor, left out of this file, each part a warning in `notes`
    (config/locks.py)."""
    name = stem(path)
    if not NAME_RE.match(name):
        return [
            Problem(
                "error",
                path,
                1,
                f"{name!r} is not a sensor name: use lowercase letters, digits, - and _",
                sensor=name,
                layer=layer,
            )
        ]
    try:
        raw, node = read_yaml(path)
    except YamlError as exc:
        return [Problem("error", path, exc.line, exc.message, name, None, layer)]
    except OSError as exc:
        return [Problem("error", path, 1, f"cannot read: {exc.strerror}", name, None, layer)]
    if raw is None:
        raw = {}
    if layer not in ("managed", "shipped") or held:
        raw = _unlocked(raw, node, path, name, layer, held or {}, notes)
    candidate = merge(base, raw) if base else raw
    try:
        sensor, wheres = _validate(candidate)
    except SpecError as first:
        from .specerrors import mistakes  # the refusal path only

        found = mistakes(candidate) or [first]
        problems = []
        for mistake in found:
            rule = mistake.path[1] if len(mistake.path) > 1 and mistake.path[0] == "rules" else None
            line, column = position(node, mistake.path, value=mistake.at == "value")
            problems.append(
                Problem(
                    "error",
                    path,
                    line,
                    mistake.message.strip(),
                    name,
                    rule if isinstance(rule, str) else None,
                    layer,
                    column,
                )
            )
        return problems
    return raw, candidate, sensor, wheres


def _unlocked(
    raw: Any,
    node: Any,
    path: str,
    name: str,
    layer: str | None,
    held: dict[str | None, str],
    notes: list[Problem] | None,
) -> Any:
    """`raw` without what managed files lock; a warning for each part left out, and for
    `locked` where only the managed layer honours it."""
    from . import locks

    raw, dropped = locks.strip(raw, held)
    if layer not in ("managed", "shipped"):
        why = "locked is honoured in the managed layer only (/etc/xdg/agent-ways/sensors)"
        dropped += [(where, why) for where in locks.unused(raw)]
    if notes is None:
        return raw
    for where, why in dropped:
        line, column = position(node, list(where)) if where else (1, None)
        rule = str(where[1]) if len(where) > 1 and where[0] == "rules" else None
        notes.append(Problem("warning", path, line, why, name, rule, layer, column))
    return raw


def load(project: str | None = None, *, with_project: bool | None = None) -> Catalog:
    """Load every layer for `project` (default: the hook's project rule, SPEC section 1)."""
    project = project or index.project_dir()
    config, config_problem = read_config()
    allowed = canonical(project) in allowed_projects(config)
    cat = Catalog(project=project, project_allowed=allowed)
    if config_problem:
        cat.problems.append(config_problem)

    layered: list[tuple[str, str]] = []
    layered += [("shipped", p) for p in sensor_files(roots.shipped_sensor_dir())]
    for folder in roots.managed_roots():
        layered += [("managed", p) for p in sensor_files(folder + "/sensors")]
    layered += [("user", p) for p in sensor_files(roots.user_sensor_dir())]
    project_files = sensor_files(roots.project_sensor_dir(project))
    if with_project is None:
        with_project = allowed
    if with_project:
        layered += [("project", p) for p in project_files]
    else:
        for p in project_files:
            cat.refused.append(Source("project", p))
            cat.problems.append(
                Problem(
                    "warning",
                    p,
                    1,
                    f"project sensor refused: {project} is not in ways.project_sensors; "
                    f"allow it by listing it under ways: project_sensors: in "
                    f"{roots.config_file()}",
                    sensor=stem(p),
                    layer="project",
                )
            )

    merged: dict[str, tuple[dict[str, Any], list[Source], SensorFile, dict[str, Where]]] = {}
    rule_origin: dict[tuple[str, str], Source] = {}
    for layer, path in layered:
        name = stem(path)
        base = merged.get(name)
        held = cat.locks.get(name)
        got = read_sensor(path, layer, base[0] if base else None, held, cat.problems)
        if isinstance(got, list):
            cat.problems.extend(got)
            continue
        raw, candidate, sensor, wheres = got
        if layer == "managed":
            from . import locks

            locks.record(cat.locks.setdefault(name, {}), raw, path)
        sources = ([*base[1]] if base else []) + [Source(layer, path)]
        merged[name] = (candidate, sources, sensor, wheres)
        if isinstance(raw, dict) and isinstance(raw.get("rules"), dict):
            for rname in raw["rules"]:
                rule_origin[(name, rname)] = Source(layer, path)

    for name, (raw, sources, sensor, wheres) in sorted(merged.items()):
        rules = {}
        for rname, rule in sensor.rules.items():
            origin = rule_origin.get((name, rname), sources[-1])
            rules[rname] = LoadedRule(name, rname, rule, wheres[rname], origin.layer, origin.path)
        cat.sensors[name] = LoadedSensor(name, sensor, sources, rules, raw)
    return cat
