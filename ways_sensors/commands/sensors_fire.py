"""`ways sensors fire SENSOR[/RULE] --section S [--input FILE|-] [--dry-run]
[--include-disabled] [--json]`.

Builds a `test: true` record of the section from the input (a hook payload as Claude
Code sends it, or a `data` object; by default a built-in example), and sends it through
the real dispatch path of each enabled rule of the sensor selecting the section
(disabled ones too with --include-disabled): masking, chain, target and watchdog,
through delivery.attempt like every other path (but not into the counters). `where` is
not applied. Each fire is a session of its own (`ways-fire-<time>-<random>`) whose
chain starts at rule_seq 1, so a chained file it writes still verifies
(services/fire.py). Reports each attempt as delivered, refused (why; retryable or
permanent), timed out, or unconfirmed (sent over UDP: no acknowledgement can come, so
nothing says it arrived), with its duration.

Exit 0 when every record was delivered, NOT_DELIVERED (7) when one was refused or timed
out, else NOT_CONFIRMED (10) when one was only sent, unconfirmed (syslog over UDP: a
fire means a consumer accepted the record, and UDP cannot say so); 2 on a usage error
(an unknown sensor, rule or section, or only disabled rules).
`--dry-run` prints the records and stops.
JSON (stable): [{"rule", "result": "delivered" | "unconfirmed" | "refused" | "timed out",
  "outcome":
  "accepted" | "retryable" | "permanent", "cause", "detail", "retry_after", "killed",
  "duration_ms", "timeout_s", "where_applied": false, "has_where", "session_id"}]
"""

from __future__ import annotations

import argparse
import json

from .. import utf8
from ..errors import NOT_CONFIRMED, NOT_DELIVERED
from ..services.fire import fire
from . import read_json_object


def run(args: argparse.Namespace) -> int:
    source = (lambda: read_json_object(args.input)) if args.input else None
    fired = fire(
        args.target,
        args.section,
        source,
        dry_run=args.dry_run,
        include_disabled=args.include_disabled,
    )
    if args.dry_run:
        for out in fired.records:
            print(utf8.clean(json.dumps(out, indent=2, ensure_ascii=False)))
        return 0
    if args.json:
        print(json.dumps([r.as_json() for r in fired.results], indent=2))
    else:
        for res in fired.results:
            why = res.describe()
            if res.retry_after is not None:
                why += f", retry after {res.retry_after:g}s"
            print(
                f"{res.rule}: {why} in {res.duration_ms:.0f} ms (timeout {res.timeout_s:g}s)"
                + ("; its `where` is not applied by a fire" if res.where else "")
            )
        if fired.results:
            print(f"test records: session {fired.results[0].session_id}, a chain of its own")
        for rid in fired.skipped:
            print(f"{rid}: skipped (disabled); --include-disabled fires it too")
    return NOT_DELIVERED if fired.failed else 0 if fired.accepted else NOT_CONFIRMED
