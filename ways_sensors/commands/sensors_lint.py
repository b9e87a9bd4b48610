"""`ways sensors lint [--json] [PATH ...]`: spec errors (exit 3) and warnings.

Without PATH: every layer of the project, as the hook would load it. With PATH (files
or folders): those files alone, each validated on its own.

JSON (stable): {"ok": bool, "sensors": [names that loaded],
  "errors": [problem], "warnings": [problem]}
  problem = {"severity", "file", "line", "column", "sensor", "rule", "layer", "message"}
  (column: 1-based, or null where only the line is known)
Human output: `file:line[:column]: error|warning: [sensor/rule:] message`, one per line.
Every mistake of a file is reported in one run, each on the line (and column) of the
key or value at fault (specerrors.py).
"""

from __future__ import annotations

import argparse
import json

from ..config.lint import lint, lint_paths
from ..errors import INVALID
from ..services import table
from ..state.layout import rule_label


def run(args: argparse.Namespace) -> int:
    if args.paths:
        cat = lint_paths(args.paths)
    else:
        from ..config.layers import load

        cat = load(args.project)
    problems = lint(cat, config=not args.paths)
    if not args.paths:  # config.yaml's evidence keys, as the dispatcher would read them
        from ..evidence import settings as evidence_settings

        problems = evidence_settings.problems() + problems
    if args.check_targets:
        from ..config.lint import target_problems

        problems += target_problems(cat)
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
        where = rule_label(p.sensor, p.rule) + ": " if p.sensor and p.rule else ""
        sev = table.paint(p.severity, "red" if p.severity == "error" else "yellow")
        column = f":{p.column}" if p.column else ""
        print(f"{p.path}:{p.line}{column}: {sev}: {where}{p.message}")
    valid = ", ".join(sorted(cat.sensors)) or "none"
    print(f"{len(errors)} error(s), {len(warnings)} warning(s); valid sensors: {valid}")
    return INVALID if errors else 0
