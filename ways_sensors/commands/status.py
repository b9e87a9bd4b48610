"""`ways status [--json | --prometheus]`: every rule's counters and each live dispatcher.

JSON (stable): {"rules": [{"rule": "sensor/rule", "enabled", "mode", "delivery",
  "counters": {kind: n}}], "dispatchers": [{"session", "pid", "age_s"}],
  "pending_sessions": [session ids], "dead_letters": [{"rule", "path", "count"}],
  "spool_faults": {"torn", "corrupt"}, "events_log": path}

`spool_faults` counts spool frames the dispatchers skipped: torn (a hook killed in the
middle of writing one) and corrupt (unreadable); each is also in the events log.

`rejected` counts at_least_once records a consumer refused for good; they are parked
in the rule's dead-letter file (delivery.py), which is named here with its count. It
also counts records an OTLP collector dropped from an accepted batch (partial success),
which are neither retried nor parked. `--prometheus` prints the textfile the
dispatchers write to `ways.metrics_textfile` (metrics.py).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import counters, delivery, table
from ..layout import Layout, rule_key, rule_label, split_rule_key
from ..metrics import live_dispatchers
from ..spoolread import read_faults

SHOWN = counters.KINDS


def run(args: argparse.Namespace) -> int:
    if getattr(args, "prometheus", False):
        from .. import metrics

        print(metrics.render(), end="")
        return 0
    from ..layers import load

    cat = load()
    layout = Layout()
    totals = counters.read_all(layout)
    rules: list[dict[str, Any]] = []
    seen = set()
    for s in cat.sensors.values():
        for r in s.rules.values():
            rid = rule_key(s.name, r.name)
            seen.add(rid)
            rules.append(
                {
                    "rule": rule_label(s.name, r.name),
                    "enabled": bool(s.spec.enabled and r.rule.enabled),
                    "mode": r.rule.mode,
                    "delivery": r.rule.delivery,
                    "counters": {k: totals.get(rid, {}).get(k, 0) for k in SHOWN},
                }
            )
    for rid, c in totals.items():
        if rid not in seen:
            rules.append(
                {
                    "rule": rule_label(*split_rule_key(rid)),
                    "enabled": None,
                    "mode": None,
                    "delivery": None,
                    "counters": {k: c.get(k, 0) for k in SHOWN},
                }
            )
    data: dict[str, Any] = {
        "rules": rules,
        "dispatchers": live_dispatchers(layout),
        "pending_sessions": layout.pending_sessions(),
        "dead_letters": [
            {"rule": rule_label(*split_rule_key(rid)), "path": path, "count": count}
            for rid, (path, count) in delivery.dead_letters(layout).items()
        ],
        "spool_faults": read_faults(layout),
        "events_log": layout.events_log(),
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    headers = ["RULE", "STATE"] + [k.upper() for k in SHOWN]
    rows = [
        [r["rule"], {True: "on", False: "off", None: "gone"}[r["enabled"]]]
        + [r["counters"][k] for k in SHOWN]
        for r in rules
    ]
    print(table.render(headers, rows))
    print()
    if data["dispatchers"]:
        print(
            table.render(
                ["SESSION", "PID", "AGE"],
                [[d["session"], d["pid"], f"{d['age_s']:g}s"] for d in data["dispatchers"]],
            )
        )
    else:
        print("no live dispatchers")
    if data["pending_sessions"]:
        print(
            f"{len(data['pending_sessions'])} session(s) with records still owed; "
            "their dispatcher restarts at their next hook event or any session start"
        )
    for d in data["dead_letters"]:
        print(f"{d['rule']}: {d['count']} record(s) refused for good, kept in {d['path']}")
    faults = data["spool_faults"]
    if any(faults.values()):
        print(f"spool frames skipped: {faults['torn']} torn, {faults['corrupt']} corrupt")
    print(f"failures are logged in {data['events_log']}")
    return 0
