"""`ways sensors fire SENSOR[/RULE] --section S [--input FILE|-] [--dry-run] [--json]`.

Builds a `test: true` record of the section from the input (a hook payload as Claude
Code sends it, or a `data` object; by default a built-in example), and sends it through
the real dispatch path of each matching rule of the sensor: masking, chain, target and
watchdog, through delivery.attempt like every other path (but not into the counters).
Reports each outcome (accepted, retryable or permanent, with its cause and detail) and
the duration. Exit 0 when every dispatch was accepted, 1 otherwise. `--dry-run` prints
the records and stops. Fire records carry session id `ways-fire` and a chain of their own, so they
never enter a real session's chain.
"""

from __future__ import annotations

import argparse
import json

from .. import utf8
from ..services.fire import fire
from . import read_json_object


def run(args: argparse.Namespace) -> int:
    source = (lambda: read_json_object(args.input)) if args.input else None
    fired = fire(args.target, args.section, source, dry_run=args.dry_run)
    if args.dry_run:
        for out in fired.records:
            print(utf8.clean(json.dumps(out, indent=2, ensure_ascii=False)))
        return 0
    results = [r.as_json() for r in fired.results]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for res in results:
            why = ": ".join(x for x in (res["cause"], res["detail"]) if x)
            if res["retry_after"] is not None:
                why += f", retry after {res['retry_after']:g}s"
            print(
                f"{res['rule']}: {res['outcome']}{f' ({why})' if why else ''} in "
                f"{res['duration_ms']:.0f} ms (timeout {res['timeout_s']:g}s)"
            )
    return 0 if fired.accepted else 1
