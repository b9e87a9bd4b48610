"""`ways sensors tap RULE|SENSOR ... [--pretty]`: the records rules deliver, live.

Prints each record a tapped rule's worker hands its target, as its consumer gets it:
the record exactly as delivered (numbered, masked, chained), or, for a target with a
`format` (`splunk_hec`, `ecs`, `ocsf`, `text`), the document that format makes of it,
one line each, or with `--pretty` one short line
(time, sensor/rule#rule_seq, section, a summary), until Ctrl-C (exit 0). It never
changes delivery or the counters (services/tap.py). A name with no `/` taps every rule
of that sensor. A disabled rule is named on stderr first (it delivers nothing, so the
tap would wait in silence). Exit 2 when a name matches no rule.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys

from ..errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.layers import Catalog


def run(args: argparse.Namespace) -> int:
    from ..config.layers import load
    from ..services.tap import Tap, pretty

    cat = load(args.project)
    off = []
    for name in args.names:
        sensor, _, rule = name.partition("/")
        known = cat.sensors.get(sensor)
        if known is None or (rule and rule not in known.rules):
            raise UsageError(f"no rule or sensor {name!r}", hint="`ways sensors list` shows them")
        off += [
            r.label
            for n, r in known.rules.items()
            if (not rule or n == rule) and not (known.spec.enabled and r.spec.enabled)
        ]
    for label in off:  # it delivers nothing, so the tap would wait in silence
        print(
            f"{label} is disabled: nothing to tap until it is enabled "
            f"(`ways settings set ways.sensors.{label.replace('/', '.rules.')}.enabled true`)",
            file=sys.stderr,
            flush=True,
        )
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # Ctrl-C ends it wherever it is, the first line too
    shown = formats_of(cat)
    tap = Tap(list(args.names))
    print(f"tapping {', '.join(args.names)}; Ctrl-C ends", file=sys.stderr, flush=True)
    try:
        for line in tap.records(lambda: stopping):
            text = pretty(line) if args.pretty else as_sent(line, shown)
            print(text, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        tap.close()
    return 0


def formats_of(cat: Catalog) -> dict[str, str]:
    """{sensor/rule: its target's `format`} of every rule whose consumer gets a document
    other than the record's own JSON."""
    out = {}
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            fmt = getattr(rule.spec.dispatch.target, "format", "json")
            if isinstance(fmt, str) and fmt != "json":
                out[rule.label] = fmt
    return out


def as_sent(line: bytes, shown: dict[str, str]) -> str:
    """The tapped record as its rule's consumer gets it (formats/)."""
    text = line.decode("utf-8", "replace")
    if not shown:
        return text
    try:
        record = json.loads(line)
        fmt = shown.get(f"{record.get('sensor')}/{record.get('rule')}")
        if fmt is None:
            return text
        from .. import formats

        return formats.encode(fmt, record, line).decode("utf-8", "replace")
    except Exception:  # a record the format cannot take: shown as it is
        return text
