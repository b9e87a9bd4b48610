"""`ways settings get|set|unset|help|list [--json]` over every sensor key (settings.py).

Exit codes: 0 done, 2 usage error or unknown key, 3 value rejected by the spec (or
enabling a rule whose preview was never seen), 4 written but a higher layer still
decides the value, 5 write failed. `set` and `unset` write the sensor's own file at the
chosen layer (user by default, `--project DIR`), creating it with only the changed
field when the sensor comes from a lower layer; every write goes through yamlwrite.py.

JSON: get -> {"key", "value", "layer", "default", "file"}; list -> [that, ...];
help -> {"key", "type", "default", "help"}.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import yaml

from .. import previews, roots, yamlwrite
from ..errors import InvalidError, OverriddenError, UsageError
from ..layers import _validate, load, merge, read_yaml
from ..settings import PROJECT_SENSORS, Key, all_keys, describe, dig, layer_file, parse_key, plain
from ..spec import SpecError

LAYER_ORDER = {"shipped": 0, "user": 1, "project": 2}


def _project(args) -> str | None:
    return os.path.abspath(args.project) if getattr(args, "project", None) else None


def resolve(key: Key, cat) -> dict[str, Any]:
    """The key's effective value, the layer and file that set it, and its default."""
    if key.text == PROJECT_SENSORS:
        from ..layers import read_config

        cfg, _ = read_config()
        found, value = dig(cfg, ("ways", "project_sensors"))
        return {
            "key": key.text,
            "value": value if found else [],
            "layer": "user" if found else "default",
            "default": [],
            "file": roots.config_file(),
        }
    sensor = cat.sensors.get(key.sensor)
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
    return {
        "key": key.text,
        "value": plain(value) if found else key.default,
        "layer": layer,
        "default": key.default,
        "file": path,
    }


def parse_value(text: str) -> Any:
    try:
        return yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        return text


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _deep_set(data: dict, path: tuple[str, ...], value: Any) -> dict:
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        if not isinstance(node.get(k), dict):
            node[k] = {}
        node = node[k]
    node[path[-1]] = value
    return out


def _deep_unset(data: dict, path: tuple[str, ...]) -> dict:
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        node = node.get(k) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return out
    if isinstance(node, dict):
        node.pop(path[-1], None)
    return out


def _validate_with(cat, sensor_name: str, target: str, layer: str, candidate: dict) -> None:
    """Merge the sensor's layers with `candidate` in place of `target`; SpecError if bad."""
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
    if merged:
        _validate(merged)


def cmd_get(args) -> int:
    key = parse_key(args.key)
    info = resolve(key, load(_project(args)))
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(_show(info["value"]))
    return 0


def cmd_help(args) -> int:
    key = parse_key(args.key)
    kind = (
        describe(key.info.type)
        if key.info is not None
        else ("a list of project folders" if key.text == PROJECT_SENSORS else "a YAML mapping")
    )
    out = {"key": key.text, "type": kind, "default": key.default, "help": key.help}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{key.text}\n  type:    {kind}\n  default: {_show(key.default)}\n  {key.help}")
    print(f"  set it:  ways settings set {key.text} VALUE [--project DIR]")
    return 0


def cmd_list(args) -> int:
    cat = load(_project(args))
    rows = [resolve(k, cat) for k in all_keys(cat)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from .. import table

    print(
        table.render(
            ["KEY", "VALUE", "LAYER"],
            [[r["key"], _show(r["value"])[:60], r["layer"]] for r in rows],
        )
    )
    return 0


def _set_project_sensors(args, value: Any) -> int:
    if args.project:
        raise UsageError(
            "ways.project_sensors lives in your user config.yaml only: a project "
            "cannot allow itself",
            hint="run it without --project",
        )
    from ..layers import read_config

    cfg, problem = read_config()
    if problem:
        raise InvalidError(f"{roots.config_file()}: {problem.message}")
    current = dig(cfg, ("ways", "project_sensors"))[1] or []
    if isinstance(value, str):
        value = [*current, os.path.abspath(os.path.expanduser(value))]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidError("ways.project_sensors takes a list of folders (or one folder to add)")
    value = list(dict.fromkeys(os.path.abspath(os.path.expanduser(v)) for v in value))
    yamlwrite.set_value(roots.config_file(), ["ways", "project_sensors"], value)
    print(f"{PROJECT_SENSORS} = {_show(value)}  ({roots.config_file()})")
    return 0


def cmd_set(args) -> int:
    key = parse_key(args.key)
    value = parse_value(args.value)
    if key.text == PROJECT_SENSORS:
        return _set_project_sensors(args, value)
    project = _project(args)
    layer = "project" if project else "user"
    target = layer_file(layer, key.sensor, project)
    cat = load(project, with_project=True if project else None)
    sensor = cat.sensors.get(key.sensor)
    rid = f"{key.sensor}/{key.rule}" if key.rule else None
    new_rule = bool(key.rule) and (sensor is None or key.rule not in sensor.rules)
    if new_rule and len(key.path) != 2:
        raise InvalidError(
            f"{rid} does not exist yet",
            hint=f"create it whole: ways settings set ways.sensors.{key.sensor}"
            f".rules.{key.rule} '{{sections: [tool_call], dispatch: "
            "{file: {path: ~/x.jsonl}}}'",
        )
    if new_rule:
        if not isinstance(value, dict):
            raise InvalidError(f"{key.text} takes a rule: a YAML mapping")
        value = {**value, "enabled": False}  # a new rule waits for its preview
    if key.path[-1:] == ("enabled",) and key.rule and value is True and previews.waiting(rid):
        raise InvalidError(
            f"{rid} was created by a command and its preview was never seen",
            hint=f"run `ways sensors test {rid}` first",
        )
    current, _ = yamlwrite.load(target)
    candidate = _deep_set(plain(current), key.path, value)
    try:
        _validate_with(cat, key.sensor, target, layer, candidate)
    except SpecError as exc:
        raise InvalidError(
            f"{key.text}: {exc.message.strip()}",
            hint=f"`ways settings help {key.text}` says what it takes",
        ) from None
    yamlwrite.set_value(target, list(key.path), value)
    if new_rule:
        previews.created(rid)
    print(f"{key.text} = {_show(value)}  ({target})")
    if new_rule:
        print(
            f"{rid} starts disabled: run `ways sensors test {rid}`, then set "
            f"ways.sensors.{key.sensor}.rules.{key.rule}.enabled true"
        )
    return _check_overridden(key, value, project, target, layer)


def _check_overridden(key: Key, value: Any, project, target: str, layer: str) -> int:
    cat = load(project)
    if project and not cat.project_allowed:
        raise OverriddenError(
            f"written to {target}, but {project} is not in "
            "ways.project_sensors, so its sensors do not load",
            hint=f"ways settings set ways.project_sensors {project}",
        )
    sensor = cat.sensors.get(key.sensor)
    if sensor is None:
        return 0
    found, effective = dig(sensor.raw, key.path)
    if not found or plain(effective) == value or len(key.path) == 2:
        return 0
    for src in reversed(sensor.sources):
        if LAYER_ORDER[src.layer] > LAYER_ORDER[layer]:
            data, _ = read_yaml(src.path)
            if dig(data or {}, key.path)[0]:
                raise OverriddenError(
                    f"written to {target}, but the {src.layer} layer "
                    f"({src.path}) sets {key.text} to {_show(plain(effective))}",
                    hint=f"ways settings unset {key.text} --project DIR",
                )
    return 0


def cmd_unset(args) -> int:
    key = parse_key(args.key)
    project = _project(args)
    if key.text == PROJECT_SENSORS:
        if project:
            raise UsageError("ways.project_sensors lives in your user config.yaml only")
        removed = yamlwrite.unset_value(roots.config_file(), ["ways", "project_sensors"])
        print(f"{PROJECT_SENSORS} " + ("unset" if removed else "was not set"))
        return 0
    layer = "project" if project else "user"
    target = layer_file(layer, key.sensor, project)
    if not os.path.exists(target):
        print(f"{key.text} is not set at the {layer} layer")
        return 0
    cat = load(project, with_project=True if project else None)
    current, _ = yamlwrite.load(target)
    candidate = _deep_unset(plain(current), key.path)
    try:
        _validate_with(cat, key.sensor, target, layer, candidate)
    except SpecError as exc:
        raise InvalidError(
            f"unsetting {key.text} would break {key.sensor}: {exc.message.strip()}"
        ) from None
    if yamlwrite.unset_value(target, list(key.path)):
        print(f"{key.text} unset in {target}")
    else:
        print(f"{key.text} is not set at the {layer} layer")
    return 0
