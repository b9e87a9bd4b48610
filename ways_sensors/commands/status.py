"""`ways status [--json | --prometheus] [--threshold S]`: every rule's counters and
health, and each live dispatcher.

JSON (stable): {"rules": [{"rule": "sensor/rule", "enabled", "mode", "delivery",
  "counters": {kind: n}, "state": "on" | "off" | "refused" | "gone", "health":
  {"healthy", "problems", "owed", "owed_complete", "oldest_owed_age_s", "last_delivery",
  "last_error", "last_error_at", "failing_since", "failing_for_s", "dead_letters"}}],
  "unhealthy": [sensor/rule],
  "dispatchers": [{"session", "pid", "age_s"}],
  "pending_sessions": [session ids], "dead_letters": [{"rule", "path", "count"}],
  "events_log": path, "redaction_key": "ok" | "missing (created on first use)" |
  "refused: <why>", "spool_faults": {"torn", "corrupt"}, "refused": [{"file", "line",
  "layer", "sensor", "rule", "enabled"}], "not_recording": [reason, ...],
  "evidence": [{"rule", "witness_conflicts", "witness_cosigned", "witness_resyncs",
  "witness_errors", "checkpoint_errors", "trees_untracked", "machine_log_errors"}]
  (rules with any; the machine log's witness counts go to the rule whose worker asked)}

Blocked recording comes first (fleet/policy.py): an agent's settings that keep its
hooks from running ways (`allowManagedHooksOnly` over user-level wiring,
`disableAllHooks`), a wired command whose ways is gone, an installed agent left
unwired; each line names the file. JSON: "blocked": [{"agent", "kind", "file", "why"}].
Any of them also exits NOT_RECORDING (6).

Refused sensor files come next: a file that breaks the spec is refused whole and its
rules record nothing, so the first line names how many, which (file:line) and the
command that shows why; then each config.yaml key ways does not know (lint's error:
`ways.witnes` leaves the witness off), in `config_problems` too. Exit NOT_RECORDING
(6) while an enabled sensor's file is refused or config.yaml has such a key, or a
rule is `gone` (counted, no longer defined) while a session's dispatcher runs, or an
agent's recording is blocked (fleet/policy.py) (`not_recording` lists why); else
UNHEALTHY (8) while a rule is unhealthy (services/health.py: dead letters wait, or a
consumer owed records has failed for longer than `--threshold` seconds), each named in
an UNHEALTHY line with its owed count, the oldest one's age and the last error; else
NOT_SIGNED (9) when a chained rule's tree could not go on in some session
(`trees_untracked`: its records there after that are not signed; evidence/carry.py
lists the cases); else 0. `--prometheus` always exits 0 (its gauges say it).

A witness conflict is an alarm, printed as ALARM below the table: a
witness refused one of the rule's checkpoints (409) because it holds another history
of that tree (docs/evidence.md).

`spool_faults` counts spool frames the dispatchers skipped: torn (a hook killed in the
middle of writing one) and corrupt (unreadable); each is also in the events log.

`rejected` counts at_least_once records a consumer refused for good; they are parked
in the rule's dead-letter file (deadletters.py), which is named here with its count. It
also counts records an OTLP collector dropped from an accepted batch (partial success),
which are neither retried nor parked. `--prometheus` prints the textfile the
dispatchers write to `ways.metrics_textfile` (metrics.py).

The state root is checked first (secure.py): one that is a link or another user's is
refused in one line, one with loose permissions repaired. The JSON also has `"state":
{"root", "bytes", "files", "sessions", "complete", "abandoned_after_s"}`, the root's
size (dispatch/usage.py; `complete` is false past the entries it counts). Status only
reports: abandoned sessions are removed by the next dispatcher start.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ..dispatch.spoolread import read_faults
from ..errors import NOT_RECORDING, NOT_SIGNED, UNHEALTHY
from ..services import status as service
from ..services import table
from ..state import counters
from ..state.layout import rule_key, split_rule_label

SHOWN = counters.KINDS


def run(args: argparse.Namespace) -> int:
    from .. import roots
    from ..dispatch import usage
    from ..state import secure  # the state root: checked first, and its size

    try:
        secure.ensure_private_dir(roots.state_root(), roots.state_root(), create=False)
    except FileNotFoundError:
        pass  # nothing recorded yet
    threshold = getattr(args, "threshold", None)
    threshold = service.THRESHOLD_S if threshold is None else threshold
    if getattr(args, "prometheus", False):
        from ..dispatch import metrics

        snap = service.snapshot(health_threshold=threshold)
        owed = {
            rule_key(*split_rule_label(rule)): (h.owed, h.age_s(snap.now))
            for rule, h in snap.health.items()
        }
        print(metrics.render(owed=owed), end="")
        return 0
    from ..fleet import policy

    snap = service.snapshot(health_threshold=threshold)
    blocked = policy.findings()
    code = NOT_RECORDING if snap.not_recording or blocked else UNHEALTHY if snap.unhealthy else 0
    data: dict[str, Any] = snap.as_json()
    data["blocked"] = [b.as_json() for b in blocked]
    rules = data["rules"]
    data["spool_faults"] = read_faults()
    data["evidence"] = evidence()
    if not code and any(e["trees_untracked"] for e in data["evidence"]):
        code = NOT_SIGNED
    if args.json:
        print(json.dumps({**data, "state": usage.usage()}, indent=2))
        return code
    for b in blocked:
        print(f"NOT RECORDING {b.line()}")
    if blocked:
        print()
    first = snap.refused_line()
    if first:
        print(first)
    for line in snap.config_lines():
        print(line)
    if first or snap.config:
        print()
    headers = ["RULE", "STATE"] + [k.upper() for k in SHOWN]
    rows = [[r["rule"], r["state"]] + [r["counters"][k] for k in SHOWN] for r in rules]
    print(table.render(headers, rows))
    for rule in snap.unhealthy:
        print(snap.health[rule].line(rule, snap.now))
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
        older = " (and its .1)" if os.path.exists(d["path"] + ".1") else ""
        print(f"{d['rule']}: {d['count']} record(s) refused for good, kept in {d['path']}{older}")
    print(f"redaction key: {data['redaction_key']}")
    faults = data["spool_faults"]
    if any(faults.values()):
        print(f"spool frames skipped: {faults['torn']} torn, {faults['corrupt']} corrupt")
    for e in data["evidence"]:
        if e["witness_conflicts"]:
            print(
                f"ALARM {e['rule']}: a witness refused {e['witness_conflicts']} checkpoint(s) "
                "for a conflicting history (events.log: evidence.witness_conflict)"
            )
        if e["trees_untracked"]:
            print(
                f"NOT SIGNED {e['rule']}: {e['trees_untracked']} time(s) a session's tree could "
                "not go on; its later records there have no checkpoint (events.log: "
                "evidence.untracked, evidence.tree_lost)"
            )
        if e["witness_errors"] or e["checkpoint_errors"]:
            print(
                f"{e['rule']}: {e['checkpoint_errors']} checkpoint(s) not signed, "
                f"{e['witness_errors']} witness request(s) failed (events.log: evidence.*)"
            )
        if e["machine_log_errors"]:
            print(
                f"{e['rule']}: {e['machine_log_errors']} batch(es) of checkpoints not in the "
                "machine log (events.log: evidence.machine_log_failed)"
            )
    print(f"failures are logged in {data['events_log']}")
    print(usage.describe(usage.usage()))
    gone = [r for r in snap.not_recording if r.endswith(" gone")]
    if gone:
        print(f"rules gone while sessions run: {', '.join(g[:-5] for g in gone)}")
    return code


EVIDENCE = (
    "witness_conflicts",
    "witness_cosigned",
    "witness_resyncs",
    "witness_errors",
    "checkpoint_errors",
    "trees_untracked",
    "machine_log_errors",
)


def evidence() -> list[dict[str, Any]]:
    """Per rule with any: the signed-checkpoint counters (evidence/sealer.py). A witness
    conflict is an alarm: a witness holds another history of one of the rule's trees."""
    from ..state.layout import rule_label, split_rule_key

    out = []
    for rid, totals in counters.read_all().items():
        got = {k: int(totals.get(k, 0)) for k in EVIDENCE}
        if any(got.values()):
            out.append({"rule": rule_label(*split_rule_key(rid)), **got})
    return out
