"""`ways deadletters list|show|replay|drop [SENSOR/RULE] [--session ID] [--json]`.

The records at_least_once rules parked because a consumer refused them for good
(deadletters.py has the files; services/deadletters.py what is done with them).
`list` counts them per rule (sessions, first and last parked, the reasons); `show`
prints each parked line, oldest first; `replay` sends them through each rule's
current target in order and removes only what was accepted (a rule stops at its
first record not accepted); `drop` removes them.

Exit codes: 0; USAGE (2) for an unknown rule, a rule gone (nothing to replay
through), or another replay or drop of the rule running; NOT_DELIVERED (7) when
`replay` kept a record because it was not accepted, or could not remove delivered
ones (a file rotated meanwhile: replaying again sends them twice); NOT_CONFIRMED (10)
when it sent records a target cannot confirm (syslog over UDP) and kept them.

JSON (stable): list: [{"rule", "records", "sessions", "first_parked", "last_parked",
  "reasons": {reason: n}}]; show: [parked line]; replay: [{"rule", "delivered",
  "unconfirmed", "kept", "failed", "removed"}]; drop: [{"rule", "dropped", "removed"}].
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from .. import utf8
from ..errors import NOT_CONFIRMED, NOT_DELIVERED
from ..services import deadletters as service
from ..services import table
from ..state.layout import Layout, rule_label, split_rule_key


def _selected(args: argparse.Namespace) -> tuple[Layout, list[str]]:
    layout = Layout()
    return layout, service.rule_keys(args.rule, layout)


def cmd_list(args: argparse.Namespace) -> int:
    layout, keys = _selected(args)
    rows: list[dict[str, Any]] = []
    for key in keys:
        parked = service.read(key, args.session, layout).parked
        if not parked:
            continue
        stamps = [str(p.meta.get("ts", "")) for p in parked]
        rows.append(
            {
                "rule": rule_label(*split_rule_key(key)),
                "records": len(parked),
                "sessions": len({p.meta.get("session") for p in parked}),
                "first_parked": min(stamps),
                "last_parked": max(stamps),
                "reasons": dict(Counter(str(p.meta.get("reason", "")) for p in parked)),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no dead letters")
        return 0
    headers = ["RULE", "RECORDS", "SESSIONS", "FIRST PARKED", "LAST PARKED", "REASONS"]
    cells = []
    for r in rows:
        reasons = ", ".join(f"{k} ({n})" for k, n in r["reasons"].items())
        cells.append([r[k] for k in ("rule", "records", "sessions", "first_parked", "last_parked")])
        cells[-1].append(reasons)
    print(table.render(headers, cells))
    print("`ways deadletters replay SENSOR/RULE` sends them again once the consumer is fixed")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    layout, keys = _selected(args)
    out = [
        {"rule": rule_label(*split_rule_key(key)), **p.as_json()}
        for key in keys
        for p in service.read(key, args.session, layout).parked
    ]
    if args.json:
        print(utf8.clean(json.dumps(out, indent=2, ensure_ascii=False)))
    else:
        for line in out:
            print(utf8.clean(json.dumps(line, ensure_ascii=False)))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from ..config.layers import load

    layout, keys = _selected(args)
    cat = load()
    results = []
    for key in keys:
        if not service.read(key, args.session, layout).parked:
            continue
        results.append(service.replay(cat, key, args.session, layout))
    if args.json:
        print(json.dumps([r.as_json() for r in results], indent=2))
    else:
        if not results:
            print("no dead letters to replay")
        for r in results:
            line = f"{r.rule}: {r.delivered} delivered"
            if r.unconfirmed:
                line += (
                    f", {r.unconfirmed} sent unconfirmed and kept (no acknowledgement over "
                    "UDP: `ways deadletters drop` them once the consumer shows them)"
                )
            if r.failed:
                line += f", {r.kept} kept (stopped at one {r.failed})"
            if r.delivered and not r.removed:
                line += "; the delivered ones could not be removed (the file rotated meanwhile)"
            print(line)
    if not all(not r.failed and r.removed for r in results):
        return NOT_DELIVERED
    return NOT_CONFIRMED if any(r.unconfirmed for r in results) else 0


def cmd_drop(args: argparse.Namespace) -> int:
    layout, keys = _selected(args)
    results = []
    for key in keys:
        n, done = service.drop(key, args.session, layout)
        if n:
            results.append(
                {"rule": rule_label(*split_rule_key(key)), "dropped": n, "removed": done}
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            undone = "" if r["removed"] else " (not removed: the file rotated meanwhile; try again)"
            print(f"{r['rule']}: {r['dropped']} record(s) dropped{undone}")
        if not results:
            print("no dead letters to drop")
    return 0 if all(r["removed"] for r in results) else NOT_DELIVERED
