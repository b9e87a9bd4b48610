"""`ways sensors lint [--json] [PATH ...]`: spec errors (exit 3) and warnings.

Without PATH: every layer of the project, as the hook would load it. With PATH (files
or folders): those files alone, each validated on its own.

JSON (stable): {"ok": bool, "sensors": [names that loaded],
  "errors": [problem], "warnings": [problem]}
  problem = {"severity", "file", "line", "sensor", "rule", "layer", "message"}
Human output: `file:line: error|warning: [sensor/rule:] message`, one per line.
"""

from __future__ import annotations

import json
import os

from .. import table
from ..errors import INVALID
from ..layers import (
    Catalog,
    LoadedRule,
    LoadedSensor,
    Problem,
    Source,
    YamlError,
    _validate,
    line_of,
    read_yaml,
    sensor_files,
    stem,
)
from ..lint import lint
from ..spec import NAME_RE, SpecError


def lint_paths(paths: list[str]) -> Catalog:
    """Validate the given files alone, as if each were the only layer."""
    cat = Catalog(project="", project_allowed=False)
    files: list[str] = []
    for p in paths:
        files += sensor_files(p) if os.path.isdir(p) else [p]
    for path in files:
        name = stem(path)
        if not NAME_RE.match(name):
            cat.problems.append(
                Problem(
                    "error",
                    path,
                    1,
                    f"{name!r} is not a sensor name: use lowercase letters, digits, - and _",
                    name,
                )
            )
            continue
        try:
            raw, node = read_yaml(path)
            sensor, wheres = _validate(raw if raw is not None else {})
        except YamlError as exc:
            cat.problems.append(Problem("error", path, exc.line, exc.message, name))
            continue
        except OSError as exc:
            cat.problems.append(Problem("error", path, 1, f"cannot read: {exc.strerror}", name))
            continue
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
                )
            )
            continue
        rules = {n: LoadedRule(n, r, wheres[n], "file", path) for n, r in sensor.rules.items()}
        cat.sensors[name] = LoadedSensor(name, sensor, [Source("file", path)], rules, raw)
    return cat


def run(args) -> int:
    if args.paths:
        cat = lint_paths(args.paths)
    else:
        from ..layers import load

        cat = load(args.project)
    problems = lint(cat)
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    if args.json:
        print(
            json.dumps(
                {
                    "ok": not errors,
                    "sensors": sorted(cat.sensors),
                    "errors": [p.as_json() for p in errors],
                    "warnings": [p.as_json() for p in warnings],
                },
                indent=2,
            )
        )
        return INVALID if errors else 0
    for p in errors + warnings:
        where = f"{p.sensor}/{p.rule}: " if p.rule else ""
        sev = table.paint(p.severity, "red" if p.severity == "error" else "yellow")
        print(f"{p.path}:{p.line}: {sev}: {where}{p.message}")
    valid = ", ".join(sorted(cat.sensors)) or "none"
    print(f"{len(errors)} error(s), {len(warnings)} warning(s); valid sensors: {valid}")
    return INVALID if errors else 0
