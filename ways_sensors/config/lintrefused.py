"""The warnings of a refused sensor file's rules, so one `ways sensors lint` run shows
every error and every warning of every file.

A file with any error is refused whole (it records nothing), so the loader gives lint
no rule of it to warn about; a person fixing the errors then met the warnings (a
`where` path that can never hold, content leaving the machine) only on the next run.
Here each rule of a refused file is decoded on its own, as the file holds it: a rule
that is fine by itself gets the same warnings a loaded one would (lint.rule_warnings).
A rule with errors of its own still warns of what stands: the fields at fault are set
aside one by one (a key ways does not know or a bad value dropped, a `where` entry
that does not compile dropped alone, bad `sections` read as every section, a bad
`dispatch` replaced by a stand-in whose warnings are not given) until the rest decodes,
so a `where` path that can never hold is told beside the rule's `timeout` typo, not a
run later. A rule that still does not decode, or only decodes with what a lower layer
gives its sensor, is left to its errors: its warnings come once the file loads.
"""

from __future__ import annotations

from typing import Any

from .conditions import ConditionError, compile_where
from .layers import Catalog, LoadedSensor, Problem, Source, stem
from .rules import LoadedRule
from .spec import SECTIONS, Rule, SensorFile, SpecError
from .specdecode import decode_rule
from .yamlread import YamlError, read_yaml


def refused_files(cat: Catalog) -> dict[str, str | None]:
    """{path: layer} of every file an error refused, in the order of its first error."""
    loaded = {src.path for s in cat.sensors.values() for src in s.sources}
    out: dict[str, str | None] = {}
    for p in cat.problems:
        if p.severity == "error" and p.path and p.path not in loaded:
            out.setdefault(p.path, p.layer)
    return out


STAND_IN: dict[str, Any] = {"file": {"path": "/dev/null"}}  # a `dispatch` at fault
SET_ASIDE = 32  # fields set aside at most, per rule: a rule past it is left to its errors


def standing(body: Any) -> tuple[Rule, Any, bool] | None:
    """The rule as far as it stands: decoded with each field at fault set aside, its
    compiled `where`, and whether its own consumer stood (False: STAND_IN took its
    place); None when even that does not decode."""
    if not isinstance(body, dict):
        return None
    body, consumer = dict(body), True
    for _ in range(SET_ASIDE):
        try:
            spec = decode_rule(body)
            return spec, compile_where(spec.where, spec.match), consumer
        except ConditionError as exc:  # one `where` entry that does not compile
            where = dict(body.get("where") or {})
            if where.pop(exc.key, None) is None:
                return None
            body["where"] = where
        except SpecError as exc:
            key = exc.path[0] if exc.path else None
            if key == "where" and len(exc.path) > 1 and isinstance(body.get("where"), dict):
                body["where"] = {k: v for k, v in body["where"].items() if k != exc.path[1]}
            elif key == "sections":  # a path no section has is still told
                body["sections"] = list(SECTIONS)
            elif key == "dispatch" and consumer:
                body["dispatch"], consumer = STAND_IN, False
            elif isinstance(key, str) and key in body and key != "dispatch":
                del body[key]
            else:
                return None
    return None


def rules_of(
    path: str, layer: str | None
) -> tuple[LoadedSensor, list[tuple[LoadedRule, bool]]] | None:
    """The rules of a refused file, each as far as it stands, with whether its own
    consumer stood (None: no mapping of rules)."""
    try:
        raw, _ = read_yaml(path)
    except (YamlError, OSError, ValueError):
        return None
    rules: Any = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(rules, dict):
        return None
    name, where_from = stem(path), layer or "file"
    good: dict[str, LoadedRule] = {}
    stood: list[tuple[LoadedRule, bool]] = []
    for rule_name, body in rules.items():
        if not isinstance(rule_name, str):
            continue
        try:
            got = standing(body)
        except (ValueError, TypeError):
            got = None
        if got is None:
            continue  # its own errors say what is wrong with it
        spec, where, consumer = got
        good[rule_name] = LoadedRule(name, rule_name, spec, where, where_from, path)
        stood.append((good[rule_name], consumer))
    sensor = LoadedSensor(name, SensorFile(rules={}), [Source(where_from, path)], good, raw)
    return sensor, stood


def warnings(cat: Catalog, warn: Any) -> list[Problem]:
    """`warn(sensor, rule, consumer)` (lint.rule_warnings, with its line cache) for every
    rule of every refused file, as far as it stands (`consumer`: its own dispatch stood)."""
    out: list[Problem] = []
    for path, layer in refused_files(cat).items():
        got = rules_of(path, layer)
        if got is None:
            continue
        sensor, rules = got
        for rule, consumer in rules:
            out.extend(warn(sensor, rule, consumer))
    return out
