"""Settings over sensor files: resolve a key through the layers, and write one.

Reading merges the layers as the hook does and names the layer and file that decided
the value. `set_setting` and `unset_setting` write the sensor's own file at one layer
(user by default, the project layer of `project`), creating it with only the changed
field when the sensor comes from a lower layer, after validating the merge the write
would produce; every write goes through yamlwrite.py. A rule created here starts
`enabled: false` and waits for its preview; every set and unset passes the merged
sensor before and after through the preview gate (previews.refuse_enabling), so no
key, whole rule or sensor flag switches an unseen rule on. The keys that live in the
user's config.yaml only (`ways.project_sensors`, ...) are set by user_config.py.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import roots
from ..config import locks, yamlwrite
from ..config import managed as managed_config
from ..config.layers import Catalog, _read_config, _validate, load, merge, read_config
from ..config.settings import (
    CONFIG_KEYS,
    Key,
    all_keys,
    describe,
    dig,
    layer_file,
    parse_key,
    plain,
)
from ..config.spec import SpecError
from ..config.yamlread import read_yaml
from ..errors import InvalidError, OverriddenError, UsageError
from ..state import previews
from ..state.layout import rule_label
from . import project_folder, user_config
from .table import show as show  # the tab and the commands print values alike

LAYER_ORDER = {"shipped": 0, "managed": 1, "user": 2, "project": 3}


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


def resolve(key: Key, cat: Catalog, read: Callable[[str], tuple[Any, Any]] = read_yaml) -> Setting:
    """The key's effective value, the layer and file that set it, and its default.
    `read` reads a layer's file (list_settings passes one that reads each file once)."""
    if key.text in CONFIG_KEYS:
        cfg, _ = read_config()
        dotted = tuple(key.text.split("."))
        found, value = dig(cfg, dotted)
        default = CONFIG_KEYS[key.text][0]
        layer, file = ("user" if found else "default"), roots.config_file()
        held = managed_config.lock_of(key.text)
        if found and (held or not dig(_read_config(file)[0], dotted)[0]):
            layer, file = "managed", held or file  # the administrator's value
        return Setting(key.text, value if found else default, layer, default, file)
    sensor = cat.sensors.get(key.sensor or "")
    if sensor is None:
        raise UsageError(f"no sensor {key.sensor!r}", hint="`ways sensors list` shows them")
    if key.rule and key.rule not in sensor.rules:
        raise UsageError(f"sensor {key.sensor!r} has no rule {key.rule!r}")
    found, value = dig(sensor.raw, key.path)
    layer, path = "default", None
    held = locks.refusal(cat.locks, sensor.name, key.rule, None if key.rule else key.path[0])
    if found:
        for src in reversed(sensor.sources):
            if held and src.layer not in ("managed", "shipped"):
                continue  # its word on a locked part was left out (config/locks.py)
            try:
                data, _ = read(src.path)
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
    read = functools.cache(read_yaml)  # one parse per file, not one per key
    return [resolve(k, cat, read) for k in all_keys(cat)]


def help_for(key: str) -> KeyHelp:
    parsed = parse_key(key)
    if parsed.text in CONFIG_KEYS:
        default, kind, _ = CONFIG_KEYS[parsed.text]
        return KeyHelp(parsed.text, kind, default, parsed.help)
    kind = describe(parsed.info.type) if parsed.info is not None else "a YAML mapping"
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


def set_setting(key: str, value: Any, project: str | None = None) -> SetResult:
    """Write `value` (already parsed: parse_value) at the user layer or `project`'s."""
    parsed = parse_key(key)
    project = project_folder(project)
    if parsed.text in user_config.SETTERS:
        managed_config.refuse(parsed.text)
        value, path = user_config.SETTERS[parsed.text](value, project)
        return SetResult(parsed.text, value, path)
    sensor_name = parsed.sensor or ""
    layer = "project" if project else "user"
    target = layer_file(layer, sensor_name, project)
    cat = load(project, with_project=True if project else None)
    locks.refuse(cat.locks, sensor_name, parsed.rule, None if parsed.rule else parsed.path[0])
    sensor = cat.sensors.get(sensor_name)
    rid = rule_label(sensor_name, parsed.rule) if parsed.rule else None
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
        overridden=_overridden(parsed, value, project, target, layer, cat, candidate),
    )


def _overridden(
    key: Key,
    value: Any,
    project: str | None,
    target: str,
    layer: str,
    cat: Catalog,
    written: dict[str, Any],
) -> OverriddenError | None:
    """Why the value just written is not the one in effect, if it is not. `cat` is the
    catalog read before the write and `written` the target file's data now: the write
    changed that one file, so the sensor in effect is `cat`'s layers with `written` in
    the target's place (_merged), without loading and validating every layer again
    (bench/RESULTS.md, 2026-12-03 16:00)."""
    if project and not cat.project_allowed:
        return OverriddenError(
            f"written to {target}, but {project} is not in "
            "ways.project_sensors, so its sensors do not load",
            hint=f"ways settings set ways.project_sensors {project}",
        )
    sensor = cat.sensors.get(key.sensor or "")
    if sensor is None:  # the write made the sensor: only its own file sets the key
        return None
    found, effective = dig(_merged(cat, sensor.name, target, layer, written), key.path)
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
    if parsed.text in CONFIG_KEYS:
        managed_config.refuse(parsed.text)
        if project:
            raise UsageError(f"{parsed.text} lives in your user config.yaml only")
        path = parsed.text.split(".")
        removed = yamlwrite.unset_value(roots.config_file(), path)
        return UnsetResult(parsed.text, "user", roots.config_file(), removed)
    sensor_name = parsed.sensor or ""
    layer = "project" if project else "user"
    target = layer_file(layer, sensor_name, project)
    cat = load(project, with_project=True if project else None)
    locks.refuse(cat.locks, sensor_name, parsed.rule, None if parsed.rule else parsed.path[0])
    if not os.path.exists(target):
        return UnsetResult(parsed.text, layer, target, False)
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
