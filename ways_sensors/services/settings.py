"""Settings over sensor files: resolve a key through the layers, and write one.

Reading merges the layers as the hook does and names the layer and file that decided
the value. `set_setting` and `unset_setting` write the sensor's own file at one layer
(user by default, the project layer of `project`), creating it with only the changed
field when the sensor comes from a lower layer, after validating the merge the write
would produce; every write goes through yamlwrite.py. A rule created here starts
`enabled: false` and waits for its preview; every set and unset passes the merged
sensor before and after through the preview gate (previews.refuse_enabling), so no
key, whole rule or sensor flag switches an unseen rule on. `ways.project_sensors` lives
in the user's config.yaml only, and takes named folders: never an empty one, which a
path join would turn into the current folder.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any

from .. import previews, roots, yamlwrite
from ..errors import InvalidError, OverriddenError, UsageError
from ..layers import Catalog, _validate, load, merge, read_config, read_yaml
from ..settings import (
    METRICS_TEXTFILE,
    PROJECT_SENSORS,
    RETENTION_ABANDONED,
    Key,
    all_keys,
    describe,
    dig,
    layer_file,
    parse_key,
    plain,
)
from ..spec import SpecError
from . import project_folder

LAYER_ORDER = {"shipped": 0, "user": 1, "project": 2}


@dataclass(frozen=True)
class Setting:
    """A key's effective value; `layer` is shipped, user, project or default."""

    key: str
    value: Any
    layer: str
    default: Any
    file: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "layer": self.layer,
            "default": self.default,
            "file": self.file,
        }


@dataclass(frozen=True)
class KeyHelp:
    key: str
    type: str
    default: Any
    help: str

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "type": self.type, "default": self.default, "help": self.help}


@dataclass(frozen=True)
class SetResult:
    """What was written where. `created_rule` names a rule written disabled that waits
    for its preview; `overridden` is set when the write landed but another layer (or an
    untrusted project) still decides: the caller reports it (exit 4), it is not raised."""

    key: str
    value: Any
    file: str
    created_rule: str | None = None
    overridden: OverriddenError | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "file": self.file,
            "created_rule": self.created_rule,
            "overridden": self.overridden.message if self.overridden else None,
        }


@dataclass(frozen=True)
class UnsetResult:
    key: str
    layer: str
    file: str
    removed: bool  # False: the key was not set at that layer

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "layer": self.layer, "file": self.file, "removed": self.removed}


def parse_value(text: str) -> Any:
    """A value as typed on a command line or in a form: YAML, else the text itself."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        return text


def resolve(key: Key, cat: Catalog) -> Setting:
    """The key's effective value, the layer and file that set it, and its default."""
    if key.text == PROJECT_SENSORS:
        cfg, _ = read_config()
        found, value = dig(cfg, ("ways", "project_sensors"))
        return Setting(
            key.text,
            value if found else [],
            "user" if found else "default",
            [],
            roots.config_file(),
        )
    if key.text == METRICS_TEXTFILE:
        cfg, _ = read_config()
        found, value = dig(cfg, ("ways", "metrics_textfile"))
        return Setting(
            key.text,
            value if found else None,
            "user" if found else "default",
            None,
            roots.config_file(),
        )
    if key.text == RETENTION_ABANDONED:
        cfg, _ = read_config()
        found, value = dig(cfg, tuple(RETENTION_ABANDONED.split(".")))
        layer = "user" if found else "default"
        return Setting(key.text, value if found else "7d", layer, "7d", roots.config_file())
    sensor = cat.sensors.get(key.sensor or "")
    if sensor is None:
        raise UsageError(f"no sensor {key.sensor!r}", hint="`ways sensors list` shows them")
    if key.rule and key.rule not in sensor.rules:
        raise UsageError(f"sensor {key.sensor!r} has no rule {key.rule!r}")
    found, value = dig(sensor.raw, key.path)
    layer, path = "default", None
    if found:
        for src in reversed(sensor.sources):
            try:
                data, _ = read_yaml(src.path)
            except (OSError, ValueError):
                continue
            if dig(data or {}, key.path)[0]:
                layer, path = src.layer, src.path
                break
    return Setting(key.text, plain(value) if found else key.default, layer, key.default, path)


def get_setting(key: str, project: str | None = None) -> Setting:
    parsed = parse_key(key)
    return resolve(parsed, load(project_folder(project)))


def list_settings(project: str | None = None) -> list[Setting]:
    cat = load(project_folder(project))
    return [resolve(k, cat) for k in all_keys(cat)]


def help_for(key: str) -> KeyHelp:
    parsed = parse_key(key)
    if parsed.info is not None:
        kind = describe(parsed.info.type)
    elif parsed.text == PROJECT_SENSORS:
        kind = "a list of project folders"
    elif parsed.text == METRICS_TEXTFILE:
        kind = "an absolute file path (or ~/...), e.g. <textfile directory>/ways.prom"
    elif parsed.text == RETENTION_ABANDONED:
        return KeyHelp(
            parsed.text, "a duration: 12h, 7d, 2w or seconds; at least 1h", "7d", parsed.help
        )
    else:
        kind = "a YAML mapping"
    return KeyHelp(parsed.text, kind, parsed.default, parsed.help)


def _deep_set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        if not isinstance(node.get(k), dict):
            node[k] = {}
        node = node[k]
    node[path[-1]] = value
    return out


def _deep_unset(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node: Any = out
    for k in path[:-1]:
        node = node.get(k) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return out
    if isinstance(node, dict):
        node.pop(path[-1], None)
    return out


def _merged(
    cat: Catalog, sensor_name: str, target: str, layer: str, candidate: dict[str, Any]
) -> Any:
    """The sensor as the hook would load it with `candidate` in place of `target`."""
    sensor = cat.sensors.get(sensor_name)
    layers: list[tuple[int, str, Any]] = []
    for src in sensor.sources if sensor else []:
        if os.path.abspath(src.path) == os.path.abspath(target):
            continue
        data, _ = read_yaml(src.path)
        layers.append((LAYER_ORDER[src.layer], src.path, data or {}))
    layers.append((LAYER_ORDER[layer], target, candidate))
    layers.sort(key=lambda x: x[0])
    merged: Any = None
    for _, _, data in layers:
        merged = data if merged is None else merge(merged, data)
    return merged


def _validate_with(
    cat: Catalog, sensor_name: str, target: str, layer: str, current: Any, candidate: Any
) -> None:
    """Validate the merge `candidate` would produce in place of `current` (SpecError if
    bad), then pass both merges through the preview gate (InvalidError)."""
    after = _merged(cat, sensor_name, target, layer, candidate)
    if after:
        _validate(after)
    before = _merged(cat, sensor_name, target, layer, current)
    previews.refuse_enabling(sensor_name, before, after)


def _project_folders(value: Any, current: Any) -> list[str]:
    """The new `ways.project_sensors` list: `value` is one folder to add or the whole
    list. An empty or blank name is refused: joined to a path it means the current one."""
    refused = InvalidError(
        f"{PROJECT_SENSORS} takes a list of folders (or one folder to add); "
        "an empty name is refused, since it would trust the current folder",
        hint=f"name the folder: ways settings set {PROJECT_SENSORS} /path/to/project",
    )
    if isinstance(value, str):
        if not value.strip():
            raise refused
        if current is None:
            current = []
        if not isinstance(current, list):
            raise InvalidError(
                f"{roots.config_file()}: {PROJECT_SENSORS} is not a list of folders",
                hint=f"set the whole list: ways settings set {PROJECT_SENSORS} '[DIR, ...]'",
            )
        value = [*current, value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise refused
    return list(dict.fromkeys(os.path.abspath(os.path.expanduser(v)) for v in value))


def _set_project_sensors(value: Any, project: str | None) -> SetResult:
    if project:
        raise UsageError(
            "ways.project_sensors lives in your user config.yaml only: a project "
            "cannot allow itself",
            hint="run it without --project",
        )
    cfg, problem = read_config()
    if problem:
        raise InvalidError(f"{roots.config_file()}: {problem.message}")
    folders = _project_folders(value, dig(cfg, ("ways", "project_sensors"))[1])
    yamlwrite.set_value(roots.config_file(), ["ways", "project_sensors"], folders)
    return SetResult(PROJECT_SENSORS, folders, roots.config_file())


_REFUSED = {
    "inside_state_root": "inside the state root",
    "inside_config_root": "inside the config root",
    "inside_cache_root": "inside the cache root",
    "not_a_regular_file": "not a regular file",
    "not_a_metrics_file": "a file that is not a metrics textfile of ours",
}


def _set_metrics_textfile(value: Any, project: str | None) -> SetResult:
    from ..metrics import RefusedPath, check_path, textfile_path

    if project:
        raise UsageError(f"{METRICS_TEXTFILE} lives in your user config.yaml only")
    try:
        if not isinstance(value, str) or not textfile_path({"ways": {"metrics_textfile": value}}):
            raise ValueError(f"{METRICS_TEXTFILE} takes a file path")
    except ValueError as exc:
        raise InvalidError(
            str(exc), hint=f"ways settings set {METRICS_TEXTFILE} ~/x.prom"
        ) from None
    try:  # the dispatchers would refuse it anyway; say so now
        check_path(os.path.expanduser(value))
    except RefusedPath as exc:
        raise InvalidError(
            f"{METRICS_TEXTFILE}: {value} is {_REFUSED.get(exc.reason, exc.reason)}, "
            "which the textfile would replace",
            hint="name a file of its own, e.g. <textfile collector folder>/ways.prom",
        ) from None
    except OSError:
        pass  # unreadable now; the dispatcher checks again before each write
    yamlwrite.set_value(roots.config_file(), ["ways", "metrics_textfile"], value)
    return SetResult(METRICS_TEXTFILE, value, roots.config_file())


def _set_retention(value: Any, project: str | None) -> SetResult:
    from ..retention import parse_age

    if project:
        raise UsageError(f"{RETENTION_ABANDONED} lives in your user config.yaml only")
    try:
        parse_age(value)
    except ValueError as exc:
        raise InvalidError(str(exc), hint=f"ways settings set {RETENTION_ABANDONED} 7d") from None
    yamlwrite.set_value(roots.config_file(), RETENTION_ABANDONED.split("."), value)
    return SetResult(RETENTION_ABANDONED, value, roots.config_file())


def set_setting(key: str, value: Any, project: str | None = None) -> SetResult:
    """Write `value` (already parsed: parse_value) at the user layer or `project`'s."""
    parsed = parse_key(key)
    project = project_folder(project)
    if parsed.text == PROJECT_SENSORS:
        return _set_project_sensors(value, project)
    if parsed.text == METRICS_TEXTFILE:
        return _set_metrics_textfile(value, project)
    if parsed.text == RETENTION_ABANDONED:
        return _set_retention(value, project)
    sensor_name = parsed.sensor or ""
    layer = "project" if project else "user"
    target = layer_file(layer, sensor_name, project)
    cat = load(project, with_project=True if project else None)
    sensor = cat.sensors.get(sensor_name)
    rid = f"{sensor_name}/{parsed.rule}" if parsed.rule else None
    new_rule = bool(parsed.rule) and (sensor is None or parsed.rule not in sensor.rules)
    if new_rule and len(parsed.path) != 2:
        raise InvalidError(
            f"{rid} does not exist yet",
            hint=f"create it whole: ways settings set ways.sensors.{sensor_name}"
            f".rules.{parsed.rule} '{{sections: [tool_call], dispatch: "
            "{file: {path: ~/x.jsonl}}}'",
        )
    if new_rule:
        if not isinstance(value, dict):
            raise InvalidError(f"{parsed.text} takes a rule: a YAML mapping")
        value = {**value, "enabled": False}  # a new rule waits for its preview
    current = plain(yamlwrite.load(target)[0])
    candidate = _deep_set(current, parsed.path, value)
    try:
        _validate_with(cat, sensor_name, target, layer, current, candidate)
    except SpecError as exc:
        raise InvalidError(
            f"{parsed.text}: {exc.message.strip()}",
            hint=f"`ways settings help {parsed.text}` says what it takes",
        ) from None
    if new_rule and rid:
        previews.created(rid)  # gate first: a failed write leaves a gate, never a hole
    yamlwrite.set_value(target, list(parsed.path), value)
    return SetResult(
        parsed.text,
        value,
        target,
        created_rule=rid if new_rule else None,
        overridden=_overridden(parsed, value, project, target, layer),
    )


def _overridden(
    key: Key, value: Any, project: str | None, target: str, layer: str
) -> OverriddenError | None:
    """Why the value just written is not the one in effect, if it is not."""
    cat = load(project)
    if project and not cat.project_allowed:
        return OverriddenError(
            f"written to {target}, but {project} is not in "
            "ways.project_sensors, so its sensors do not load",
            hint=f"ways settings set ways.project_sensors {project}",
        )
    sensor = cat.sensors.get(key.sensor or "")
    if sensor is None:
        return None
    found, effective = dig(sensor.raw, key.path)
    if not found or plain(effective) == value or len(key.path) == 2:
        return None
    for src in reversed(sensor.sources):
        if LAYER_ORDER[src.layer] > LAYER_ORDER[layer]:
            data, _ = read_yaml(src.path)
            if dig(data or {}, key.path)[0]:
                shown = plain(effective)
                return OverriddenError(
                    f"written to {target}, but the {src.layer} layer "
                    f"({src.path}) sets {key.text} to {show(shown)}",
                    hint=f"ways settings unset {key.text} --project DIR",
                )
    return None


def unset_setting(key: str, project: str | None = None) -> UnsetResult:
    parsed = parse_key(key)
    project = project_folder(project)
    if parsed.text in (PROJECT_SENSORS, METRICS_TEXTFILE, RETENTION_ABANDONED):
        if project:
            raise UsageError(f"{parsed.text} lives in your user config.yaml only")
        path = parsed.text.split(".")
        removed = yamlwrite.unset_value(roots.config_file(), path)
        return UnsetResult(parsed.text, "user", roots.config_file(), removed)
    sensor_name = parsed.sensor or ""
    layer = "project" if project else "user"
    target = layer_file(layer, sensor_name, project)
    if not os.path.exists(target):
        return UnsetResult(parsed.text, layer, target, False)
    cat = load(project, with_project=True if project else None)
    current = plain(yamlwrite.load(target)[0])
    candidate = _deep_unset(current, parsed.path)
    try:
        _validate_with(cat, sensor_name, target, layer, current, candidate)
    except SpecError as exc:
        raise InvalidError(
            f"unsetting {parsed.text} would break {sensor_name}: {exc.message.strip()}"
        ) from None
    removed = yamlwrite.unset_value(target, list(parsed.path))
    return UnsetResult(parsed.text, layer, target, removed)


def show(value: Any) -> str:
    """A value as one line for a person: JSON for lists and mappings, YAML's words
    for booleans and null."""
    import json

    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
