"""A rule as a form edits it: its fields from the typed spec, an edit checked as
`ways settings set` would check it, and saved through the same writer.

Each field of spec.Rule becomes a `Field` with its type, default and help (the same
texts as `ways settings help`) and the widget kind that suits it: a switch for a
boolean, a choice for a literal, a YAML snippet for a mapping (`where`, `dispatch`),
one line of YAML for the rest. `check` validates each changed field alone, exactly as
`ways settings set <its key>` would (same merge of the layers, same message), then the
edit as a whole, and names the lint warnings (off-machine, `redact: none`, a literal
secret) of the rule the edit would give. `save` writes every changed field through
services/settings.py's `set_setting`, so a toggle or a save from the sensors tab is the
same write as the command's: one token on its line when it can be, comments kept. A
new rule is written whole, disabled, and waits for its preview.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import msgspec.inspect as mi
import yaml

from ..config import locks, yamlwrite
from ..config.layers import Catalog, LoadedSensor, _validate
from ..config.lint import rule_warnings
from ..config.rules import LoadedRule
from ..config.settings import describe, layer_file, plain
from ..config.spec import Rule, SpecError
from ..errors import InvalidError
from ..state import previews
from ..state.layout import rule_label
from .settings import SetResult, _merged, help_for, parse_value, set_setting

ORDER = ("enabled", "sections", "where", "match", "dispatch", "mode", "timeout")
NEW_RULE: dict[str, Any] = {
    "sections": ["tool_call"],
    "dispatch": {"file": {"path": "~/{rule}.jsonl"}},
}


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # "bool", "choice", "yaml" (a snippet of lines) or "text" (one line of YAML)
    type: str  # as `ways settings help` says it
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True)
class Check:
    """`errors`: field -> message (a field's own, or "" for the rule as a whole)."""

    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _kind(t: Any) -> tuple[str, tuple[str, ...]]:
    t = t.type if isinstance(t, mi.Metadata) else t
    if isinstance(t, mi.BoolType):
        return "bool", ()
    if isinstance(t, mi.LiteralType):
        return "choice", tuple(map(str, t.values))
    kinds = t.types if isinstance(t, mi.UnionType) else (t,)
    kinds = tuple(k.type if isinstance(k, mi.Metadata) else k for k in kinds)
    if any(isinstance(k, mi.LiteralType) for k in kinds):
        return "text", ()  # a word or a one-line mapping (`redact`: none, {kinds: [ip]})
    if any(isinstance(k, (mi.StructType, mi.DictType)) for k in kinds):
        return "yaml", ()
    return "text", ()


def fields() -> list[Field]:
    """Every field of a rule, in the order a person fills them in."""
    out = []
    info = mi.type_info(Rule)
    assert isinstance(info, mi.StructType)  # a Struct class inspects to a StructType
    for f in info.fields:
        if f.name == "locked":
            continue  # the managed layer's word alone (config/locks.py): not a form field
        kind, choices = _kind(f.type)
        h = help_for(f"ways.sensors.s.rules.r.{f.name}")
        out.append(Field(f.name, kind, describe(f.type), h.default, h.help, choices, f.required))
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(out, key=lambda f: rank.get(f.name, len(ORDER)))


def key(sensor: str, rule: str, name: str | None = None) -> str:
    return f"ways.sensors.{sensor}.rules.{rule}" + (f".{name}" if name else "")


def values_of(sensor: LoadedSensor | None, rule: str) -> dict[str, Any]:
    """The rule's effective value of every field (its default where no layer sets it);
    a rule that does not exist yet gets the new-rule template, disabled."""
    raw = (sensor.raw.get("rules") or {}).get(rule) if sensor else None
    if raw is None:
        raw = copy.deepcopy(NEW_RULE)
        raw["dispatch"]["file"]["path"] = f"~/{rule}.jsonl"
        raw["enabled"] = False
    raw = plain(raw)
    return {f.name: copy.deepcopy(raw.get(f.name, f.default)) for f in fields()}


# --- text <-> value, as a form shows and reads them ----------------------------------


def to_text(f: Field, value: Any) -> str:
    if f.kind == "yaml" and isinstance(value, (dict, list)):
        return yaml.safe_dump(value, default_flow_style=False, sort_keys=False).rstrip("\n")
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return str(value)


class SnippetError(ValueError):
    pass


def from_text(f: Field, text: str) -> Any:
    """A field's text as its value: one line goes through `parse_value` like a command
    line value; a snippet must be YAML (SnippetError says where it is not)."""
    if f.kind != "yaml":
        return parse_value(text)
    if not text.strip():
        return None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise SnippetError(f"not valid YAML at line {line}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise SnippetError(f"not valid YAML: {exc}") from None


# --- checking an edit as `ways settings set` would -----------------------------------


def _candidate(current: Any, rule: str, values: dict[str, Any], new: bool) -> Any:
    out = copy.deepcopy(current)
    rules = out.setdefault("rules", {})
    if not isinstance(rules, dict):
        rules = out["rules"] = {}
    if new:
        rules[rule] = {**values, "enabled": False}
        return out
    node = rules.setdefault(rule, {})
    if not isinstance(node, dict):
        node = rules[rule] = {}
    node.update(copy.deepcopy(values))
    return out


def target_of(sensor: str, layer: str, project: str | None) -> str:
    return layer_file(layer, sensor, project if layer == "project" else None)


def check(
    cat: Catalog,
    sensor: str,
    rule: str,
    values: dict[str, Any],
    base: dict[str, Any],
    layer: str = "user",
    new: bool = False,
) -> Check:
    """Check the fields of `values` that differ from `base` (the values the form
    opened with) as written at `layer`; every message is the one `ways settings set`
    gives for that field's key."""
    held = locks.refusal(cat.locks, sensor, rule)
    if held:
        return Check({"": held})  # what `ways settings set` refuses (config/locks.py)
    target = target_of(sensor, layer, cat.project)
    current, _ = yamlwrite.load(target)
    current = plain(current)
    changed = {k: v for k, v in values.items() if new or v != base.get(k)}
    errors: dict[str, str] = {}
    rid = rule_label(sensor, rule)
    before = _merged(cat, sensor, target, layer, current)
    for name, value in changed.items():
        if new and name == "enabled" and value is True:
            errors[name] = f"{rid} is new: it starts disabled until its preview has been seen"
            continue
        alone = {**base, name: value} if new else {name: value}
        after = _merged(cat, sensor, target, layer, _candidate(current, rule, alone, new))
        try:
            _validate(after)
            previews.refuse_enabling(sensor, before, after)  # the gate, as `set` applies it
        except SpecError as exc:
            errors[name] = f"{key(sensor, rule, name)}: {exc.message.strip()}"
        except InvalidError as exc:
            errors[name] = exc.message
    if errors:
        return Check(errors)
    try:
        merged = _merged(cat, sensor, target, layer, _candidate(current, rule, changed, new))
        spec, wheres = _validate(merged)
    except SpecError as exc:
        return Check({"": f"{key(sensor, rule)}: {exc.message.strip()}"})
    loaded = LoadedRule(sensor, rule, spec.rules[rule], wheres[rule], layer, target)
    as_sensor = LoadedSensor(sensor, spec, [], {rule: loaded}, merged)
    return Check({}, [p.message for p in rule_warnings(as_sensor, loaded)])


def save(
    cat: Catalog,
    sensor: str,
    rule: str,
    values: dict[str, Any],
    base: dict[str, Any],
    layer: str = "user",
    new: bool = False,
) -> list[SetResult]:
    """Write the changed fields (a new rule whole, disabled) through set_setting."""
    project = cat.project if layer == "project" else None
    if new:
        whole = {k: v for k, v in values.items() if k != "enabled" and v is not None}
        defaults = {f.name: f.default for f in fields()}
        whole = {k: v for k, v in whole.items() if k in NEW_RULE or v != defaults.get(k)}
        return [set_setting(key(sensor, rule), whole, project)]
    done = []
    changed = [k for k in values if values[k] != base.get(k)]
    changed.sort(key=lambda k: k == "enabled")  # enable last, once the rest is written
    for name in changed:
        done.append(set_setting(key(sensor, rule, name), values[name], project))
    return done
