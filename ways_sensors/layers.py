"""Finding, merging and trusting sensor files: shipped, then user, then project.

A later layer changes only the fields it names: mappings merge by key (rules by
name), while lists, scalars, `where` and `dispatch` are replaced whole. Each file is
applied on top of what the layers below produced and the result is validated; a file
that breaks the spec is refused alone (with its line and reason) and the sensor keeps
what the lower layers gave it. Project files load only when the project is listed in
`ways.project_sensors` of the user's config.yaml; a project file cannot add itself,
because that key is only read from the user's config, never from a sensor file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

import yaml

from . import roots
from .conditions import ConditionError, Where, compile_where
from .spec import NAME_RE, Rule, SensorFile, SpecError, decode_sensor

LAYERS = ("shipped", "user", "project")
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

    def as_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "file": self.path,
            "line": self.line,
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
class LoadedRule:
    name: str
    rule: Rule
    where: Where
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

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


# --- YAML with line marks, bounded ------------------------------------------------

MAX_YAML_BYTES = 1 << 20  # a sensor file or config.yaml; the parser reads ~300 KB/s
MAX_DEPTH = 64  # nesting of mappings and lists; sensor files need about 6


class YamlError(ValueError):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.message = message
        self.line = line


class _Refused(yaml.MarkedYAMLError):
    """Valid YAML this loader will not read (its problem is the whole message)."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader refusing aliases, nesting beyond MAX_DEPTH and values it cannot build.

    Aliases are refused outright rather than allowed within an expansion budget: a few
    hundred bytes of nested anchors (`b: &b [*a, *a, ...]`, nine levels) stand for a
    billion nodes, and every step after the parser (the duplicate-key walk, merging the
    layers, typed decoding, the index's JSON) walks the expanded tree, so a budget would
    have to be enforced in each of them. Sensor files and config.yaml are short and
    hand-written: they never need `*name` or the `<<: *name` merge key. Without
    aliases the node graph is a tree, so all of those steps are linear in the file.
    """

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(
                None,
                None,
                f"alias *{event.anchor} refused: aliases are not allowed in sensor files "
                "or config.yaml (a nest of them can expand to billions of values); "
                "write the value out in full",
                event.start_mark,
            )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, AttributeError, OverflowError) as exc:
            # e.g. a date like 2001-13-45, or an integer of 5,000 digits
            raise _Refused(None, None, f"cannot read this value: {exc}", node.start_mark) from None


def _read_bounded(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_YAML_BYTES, or YamlError. O_NONBLOCK:
    a FIFO named like a sensor file would block the open itself."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise YamlError("not a regular file", 1)
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_YAML_BYTES:
            chunk = os.read(fd, MAX_YAML_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_YAML_BYTES:
        raise YamlError(f"larger than {MAX_YAML_BYTES} bytes; a sensor file is never this big", 1)
    return b"".join(chunks)


def read_yaml(path: str) -> tuple[Any, Any]:
    """Parse one YAML document; returns (data, node) so errors can name a line. Whatever
    would make a file slow or crash the loader is a YamlError: the file is refused alone."""
    text = _read_bounded(path)
    try:
        loader = _BoundedLoader(text)
        try:
            node = loader.get_single_node()
            _check_duplicate_keys(node)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        prefix = "" if isinstance(exc, _Refused) else "not valid YAML: "
        raise YamlError(f"{prefix}{exc.problem or exc}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"not valid YAML: {exc}", 1) from None
    except RecursionError:  # a caller already deep in its stack
        raise YamlError(f"nested deeper than {MAX_DEPTH} levels", 1) from None
    return data, node


def _check_duplicate_keys(node: Any) -> None:
    """A key twice in one mapping is an error; linear, as no alias reaches a node twice."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            key = getattr(k, "value", None)
            if isinstance(key, str):
                if key in seen:
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key!r}", problem_mark=k.start_mark
                    )
                seen.add(key)
            _check_duplicate_keys(v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicate_keys(v)


def line_of(node: Any, path: list[str | int]) -> int:
    """The 1-based line of the deepest node the path reaches (the file's line 1 at worst)."""
    if node is None:
        return 1
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if getattr(k, "value", None) == part:
                    line = k.start_mark.line + 1
                    node = v
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


# --- discovery and merging --------------------------------------------------------


def sensor_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith((".yaml", ".yml"))]


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
    """The user's config.yaml as a mapping; a broken file gives {} and a problem."""
    path = path or roots.config_file()
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
            raise SpecError(exc.message, ["rules", name, "where", exc.key]) from None
    return sensor, wheres


def load(project: str | None = None, *, with_project: bool | None = None) -> Catalog:
    """Load every layer for `project` (default: the hook's project rule, SPEC section 1)."""
    project = project or roots.project_dir()
    config, config_problem = read_config()
    allowed = canonical(project) in allowed_projects(config)
    cat = Catalog(project=project, project_allowed=allowed)
    if config_problem:
        cat.problems.append(config_problem)

    layered: list[tuple[str, str]] = []
    layered += [("shipped", p) for p in sensor_files(roots.shipped_sensor_dir())]
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
        if not NAME_RE.match(name):
            cat.problems.append(
                Problem(
                    "error",
                    path,
                    1,
                    f"{name!r} is not a sensor name: use lowercase letters, digits, - and _",
                    sensor=name,
                    layer=layer,
                )
            )
            continue
        try:
            raw, node = read_yaml(path)
        except YamlError as exc:
            cat.problems.append(Problem("error", path, exc.line, exc.message, name, None, layer))
            continue
        except OSError as exc:
            cat.problems.append(
                Problem("error", path, 1, f"cannot read: {exc.strerror}", name, None, layer)
            )
            continue
        if raw is None:
            raw = {}
        base = merged.get(name)
        candidate = merge(base[0], raw) if base else raw
        try:
            sensor, wheres = _validate(candidate)
        except SpecError as exc:
            rule = exc.path[1] if len(exc.path) > 1 and exc.path[0] == "rules" else None
            cat.problems.append(
                Problem(
                    "error",
                    path,
                    line_of(node, exc.path),
                    exc.message.strip(),
                    name,
                    rule if isinstance(rule, str) else None,
                    layer,
                )
            )
            continue
        sources = ([*base[1]] if base else []) + [Source(layer, path)]
        merged[name] = (candidate, sources, sensor, wheres)
        if isinstance(raw, dict) and isinstance(raw.get("rules"), dict):
            for rname in raw["rules"]:
                rule_origin[(name, rname)] = Source(layer, path)

    for name, (raw, sources, sensor, wheres) in sorted(merged.items()):
        rules = {}
        for rname, rule in sensor.rules.items():
            origin = rule_origin.get((name, rname), sources[-1])
            rules[rname] = LoadedRule(rname, rule, wheres[rname], origin.layer, origin.path)
        cat.sensors[name] = LoadedSensor(name, sensor, sources, rules, raw)
    return cat
