"""The warnings of a refused sensor file's rules, so one `ways sensors lint` run shows
every error and every warning of every file.

A file with any error is refused whole (it records nothing), so the loader gives lint
no rule of it to warn about; a person fixing the errors then met the warnings (a
`where` path that can never hold, content leaving the machine) only on the next run.
Here each rule of a refused file is decoded on its own, as the file holds it: a rule
that is fine by itself gets the same warnings a loaded one would (lint.rule_warnings);
a rule with errors of its own is left to those errors. A rule that only decodes with
what a lower layer gives its sensor is left out: its warnings come once the file loads.
"""

from __future__ import annotations

from typing import Any

from .conditions import ConditionError, compile_where
from .layers import Catalog, LoadedSensor, Problem, Source, stem
from .rules import LoadedRule
from .spec import SensorFile, SpecError
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


def rules_of(path: str, layer: str | None) -> tuple[LoadedSensor, list[LoadedRule]] | None:
    """The rules of a refused file that decode on their own (None: no mapping of rules)."""
    try:
        raw, _ = read_yaml(path)
    except (YamlError, OSError, ValueError):
        return None
    rules: Any = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(rules, dict):
        return None
    name, where_from = stem(path), layer or "file"
    good: dict[str, LoadedRule] = {}
    for rule_name, body in rules.items():
        if not isinstance(rule_name, str):
            continue
        try:
            spec = decode_rule(body)
            where = compile_where(spec.where, spec.match)
        except (SpecError, ConditionError, ValueError, TypeError):
            continue  # its own errors say what is wrong with it
        good[rule_name] = LoadedRule(name, rule_name, spec, where, where_from, path)
    sensor = LoadedSensor(name, SensorFile(rules={}), [Source(where_from, path)], good, raw)
    return sensor, list(good.values())


def warnings(cat: Catalog, warn: Any) -> list[Problem]:
    """`warn(sensor, rule)` (lint.rule_warnings, with its line cache) for every rule of
    every refused file that decodes on its own."""
    out: list[Problem] = []
    for path, layer in refused_files(cat).items():
        got = rules_of(path, layer)
        if got is None:
            continue
        sensor, rules = got
        for rule in rules:
            out.extend(warn(sensor, rule))
    return out
