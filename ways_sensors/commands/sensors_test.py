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

from .. import utf8
from ..services.preview import preview

SHOWN = 10


def run(args: argparse.Namespace) -> int:
    result = preview(args.rule, args.session, args.transcript, agent=getattr(args, "agent", None))
    path, sent, matched = result.transcript, result.sent, result.matched
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
        return 0
    print(f"{args.rule} over {path}")
    print(
        f"  {result.lines} lines ({result.malformed} unreadable), {result.records} records,"
        f" {len(sent)} would be sent"
    )
    for section, n in sorted(matched.items()):
        print(f"  {section:<20} {n}")
    shown = sent if args.all else sent[:SHOWN]
    for rec in shown:
        print(utf8.clean(json.dumps(rec, ensure_ascii=False))[:400])
    if len(sent) > len(shown):
        print(f"... {len(sent) - len(shown)} more: --all or --json shows every record")
    sensor, _, rule = args.rule.partition("/")
    print(
        f"preview seen: `ways settings set ways.sensors.{sensor}.rules.{rule}"
        ".enabled true` turns it on"
    )
    return 0
