"""`ways sensors explain PAYLOAD|- [--agent NAME] [--json]`, or `--session ID --event N`.

For each record the payload gives (or the session's record N), one line per rule:

    tool_call (PreToolUse)
      receives  audit/all
      no        team/writes         where data.tool_name: wants "Write", saw "Bash"
      no        risky/prompts       section tool_call not selected (selects user_prompt)
      disabled  team/old            disabled (the rule says enabled: false)
      refused   broken              file refused: sensors/broken.yaml:3: unknown field ...

JSON (stable): [{"section", "hook_event", "seq", "verdicts": [{"rule", "receives",
  "reason", "failed": [{"path", "wants", "seen"}]}]}]
Exit 0 whatever the verdicts; 2 for a payload that is not a JSON object or names no
hook event of the agent. Nothing is dispatched (services/explain.py).
"""

from __future__ import annotations

import argparse
import json

from ..errors import UsageError
from ..services import table
from ..services.explain import Explained, explain_event, explain_payload
from . import read_json_object


def _label(reason: str, receives: bool) -> str:
    if receives:
        return "receives"
    if reason.startswith("disabled"):
        return "disabled"
    if reason.startswith("file refused"):
        return "refused"
    return "no"


def run(args: argparse.Namespace) -> int:
    recorded = args.event is not None or bool(args.session or args.transcript)
    if recorded:
        if args.payload or args.event is None:
            raise UsageError(
                "explain takes a PAYLOAD, or --session ID (or --transcript FILE) with --event N"
            )
        found = [explain_event(args.event, args.session, args.transcript, args.agent)]
    else:
        if not args.payload:
            raise UsageError("name a PAYLOAD file, or - for stdin", hint="ways sensors explain -")
        found = explain_payload(read_json_object(args.payload, "PAYLOAD"), args.agent)
    if args.json:
        print(json.dumps([e.as_json() for e in found], indent=2, ensure_ascii=False))
        return 0
    if not found:
        print("the payload gives no record")
    for e in found:
        _print(e, recorded)
    return 0


def _print(e: Explained, recorded: bool) -> None:
    rec = e.record
    # the replay's numbering, which `ways sensors test` shows too; a delivered file's
    # `seq` numbers the live session, which can hold records a replay cannot rebuild
    seq = f", record {rec['seq']} of the replayed session" if recorded else ""
    print(f"{rec.get('section')} ({rec.get('hook_event')}){seq}")
    width = max((len(v.rule) for v in e.verdicts), default=0)
    order = {"receives": 0, "no": 1, "disabled": 2, "refused": 3}
    rows = sorted(e.verdicts, key=lambda v: (order[_label(v.reason, v.receives)], v.rule))
    for v in rows:
        label = _label(v.reason, v.receives)
        colour = {"receives": "green", "no": "yellow", "refused": "red"}.get(label)
        shown = table.paint(f"{label:<8}", colour) if colour else f"{label:<8}"
        reason = "" if v.receives else v.reason
        print(f"  {shown}  {v.rule:<{width}}  {reason}".rstrip())
    n = sum(v.receives for v in e.verdicts)
    print(f"{n} of {len(e.verdicts)} rule(s) would receive it")
