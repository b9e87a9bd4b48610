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
import time
from typing import Any

from .. import agents, delivery, utf8
from ..errors import UsageError
from ..layers import load
from ..pipeline import finish
from ..records import WAY_EVENT, Draft, envelope, way_event
from ..spec import SECTIONS
from ..targets import ACCEPTED
from . import read_json_object


def _input(args: argparse.Namespace) -> dict:
    if not args.input:
        return agents.adapter(agents.DEFAULT).example(args.section)
    return read_json_object(args.input)


def drafts(section: str, data: dict) -> list[Draft]:
    ts = time.time_ns()
    adapter = agents.adapter(agents.DEFAULT)
    event = adapter.event_of(data)
    if section == "queued_message" or not event:
        body = data if not event else {"text": data.get("text", "")}
        from ..events import iso_utc

        return [Draft(section, event or "WaysFire", iso_utc(ts), body)]
    if event == WAY_EVENT:
        made = way_event(data, ts)
    elif event in adapter.EVENTS:
        made = adapter.offline_drafts(data, ts)
    else:
        raise UsageError(f"{event!r} is not a hook event {adapter.NAME} sends")
    return [d for d in made if d.section == section]


def run(args: argparse.Namespace) -> int:
    if args.section not in SECTIONS:
        raise UsageError(f"unknown section {args.section!r}: one of {', '.join(SECTIONS)}")
    cat = load()
    sensor_name, _, rule_name = args.target.partition("/")
    sensor = cat.sensors.get(sensor_name)
    if sensor is None or (rule_name and rule_name not in sensor.rules):
        raise UsageError(f"no sensor or rule {args.target!r}", hint="`ways sensors list`")
    rules = [
        r
        for n, r in sensor.rules.items()
        if (not rule_name or n == rule_name) and args.section in r.rule.sections
    ]
    if not rules:
        raise UsageError(f"no rule of {args.target} selects {args.section}")
    made = drafts(args.section, _input(args))
    if not made:
        raise UsageError(f"the input gives no {args.section} record")
    results: list[dict[str, Any]] = []
    for rule in rules:
        for i, d in enumerate(made, 1):
            rec = envelope(d, i, "ways-fire", cat.project)
            out, _ = finish(rec, sensor.name, rule, i, "0" * 64, test=True)
            if args.dry_run:
                print(utf8.clean(json.dumps(out, indent=2, ensure_ascii=False)))
                continue
            t0 = time.monotonic()
            outcome = delivery.attempt(
                sensor.name, rule, [out], session="ways-fire", tally=None, origin="fire"
            )
            ms = (time.monotonic() - t0) * 1000
            results.append(
                {
                    "rule": f"{sensor.name}/{rule.name}",
                    "outcome": outcome.status,
                    "cause": outcome.cause or None,
                    "detail": outcome.detail,
                    "retry_after": outcome.retry_after,
                    "killed": outcome.killed,
                    "duration_ms": round(ms, 1),
                    "timeout_s": rule.rule.timeout_s,
                }
            )
    if args.dry_run:
        return 0
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
    return 0 if all(r["outcome"] == ACCEPTED for r in results) else 1
