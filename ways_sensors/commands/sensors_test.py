"""`ways sensors test SENSOR/RULE [--session ID | --transcript FILE] [--agent NAME] [--json]`.

Replays a recorded session (by default the project's newest transcript; any agent's
session file, a Codex rollout or a Gemini CLI chat file, named by `--agent` or
recognised by its adapter's `is_session_file`) through the rule without dispatching,
and shows what would be sent (`--all`: every record): how many records of each
section matched, and the records themselves, masked as the rule would mask them (the
first 10 for people, `--all` or `--json` for every one). Marks the rule's preview seen.

JSON (stable): {"rule", "transcript", "lines", "malformed", "records", "matched":
  {section: n}, "sent": [record, ...]}
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from typing import Any

from .. import agents, previews, roots, utf8
from ..errors import UsageError
from ..layers import Catalog, LoadedRule, LoadedSensor, load
from ..pipeline import finish, match
from ..records import envelope
from .reconcile import adapter_of

SHOWN = 10


def rule_of(cat: Catalog, spec: str) -> tuple[LoadedSensor, LoadedRule]:
    sensor_name, _, rule_name = spec.partition("/")
    sensor = cat.sensors.get(sensor_name)
    if sensor is None or not rule_name or rule_name not in sensor.rules:
        raise UsageError(
            f"no rule {spec!r}", hint="name it SENSOR/RULE; `ways sensors list` shows them"
        )
    return sensor, sensor.rules[rule_name]


def detect(path: str) -> str | None:
    """The agent whose session file `path` is, by the adapters that can tell."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16).split(b"\n", 1)[0]
    except OSError:
        return None
    for name in agents.names():
        check = getattr(agents.adapter(name), "is_session_file", None)
        if check and check(path, head):
            return name
    return None


def run(args: argparse.Namespace) -> int:
    cat = load()
    sensor, rule = rule_of(cat, args.rule)
    name = getattr(args, "agent", None) or (args.transcript and detect(args.transcript))
    adapter = adapter_of(name or agents.DEFAULT)
    path = args.transcript or adapter.find_session_file(roots.project_dir(), args.session)
    if not path or not os.path.exists(path):
        where = f"session {args.session}" if args.session else f"project {roots.project_dir()}"
        raise UsageError(
            f"no transcript found for {where}", hint="pass --transcript FILE or --session ID"
        )
    replay = adapter.replay(path)
    matched: Counter[str] = Counter()
    sent: list[dict[str, Any]] = []
    total = 0
    prev = "0" * 64
    for i, draft in enumerate(replay.drafts(), 1):
        total += 1
        rec = envelope(draft, i, replay.session_id, roots.project_dir())
        if not match(rule, rec):
            continue
        matched[rec["section"]] += 1
        out, prev = finish(rec, sensor.name, rule, len(sent) + 1, prev)
        sent.append(out)
    previews.seen(args.rule)
    if args.json:
        print(
            json.dumps(
                {
                    "rule": args.rule,
                    "transcript": path,
                    "lines": replay.stats.lines,
                    "malformed": replay.stats.malformed,
                    "records": total,
                    "matched": dict(matched),
                    "sent": sent,
                },
                indent=2,
            )
        )
        return 0
    print(f"{args.rule} over {path}")
    print(
        f"  {replay.stats.lines} lines ({replay.stats.malformed} unreadable), {total} records,"
        f" {len(sent)} would be sent"
    )
    for section, n in sorted(matched.items()):
        print(f"  {section:<20} {n}")
    shown = sent if args.all else sent[:SHOWN]
    for rec in shown:
        print(utf8.clean(json.dumps(rec, ensure_ascii=False))[:400])
    if len(sent) > len(shown):
        print(f"... {len(sent) - len(shown)} more: --all or --json shows every record")
    print(
        f"preview seen: `ways settings set ways.sensors.{sensor.name}.rules.{rule.name}"
        ".enabled true` turns it on"
    )
    return 0
