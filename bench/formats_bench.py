"""What a wire format costs, and what the syslog target delivers to a real rsyslog.

1. Encoding: every format of formats/ (and the syslog target's RFC 5424 message around
   the record) over one session's worth of records (one per section and variant,
   tests/formats/samples.py), interleaved round by round; the median microseconds per
   record and the ratio to `json`, which passes the record's own bytes on untouched.
2. Delivery: batches of records through the syslog target (tcp) to a real rsyslogd on
   loopback (tests/rsyslog.py), against the same batches through the file target:
   the median records per second of each, from one run.

    .venv/bin/python bench/formats_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.formats import samples
from ways_sensors import formats
from ways_sensors.targets import Item, file, syslog
from ways_sensors.targets.base import Context

RECORDS = samples.records()
CTX = Context(sensor="bench", rule="formats", session_id=samples.SID, max_records=256)
BATCH = [Item(r, line) for r, line in zip(RECORDS, samples.lines(RECORDS), strict=True)]


def encoders() -> dict[str, object]:
    spec = syslog.SyslogTarget(host="127.0.0.1")
    out: dict[str, object] = {
        name: (lambda item, name=name: formats.encode(name, item.record, item.line))
        for name in formats.FORMATS
    }
    out["syslog message (json)"] = lambda item: syslog.message(spec, item)
    return out


def encoding(rounds: int, per_round: int = 200) -> dict[str, float]:
    """name -> median microseconds per record."""
    fns = encoders()
    samples_us: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(per_round):
                for item in BATCH:
                    fn(item)  # type: ignore[operator]
            samples_us[name].append((time.perf_counter() - t) * 1e6 / (per_round * len(BATCH)))
    return {name: statistics.median(v) for name, v in samples_us.items()}


def delivery(rounds: int, batch_size: int = 256) -> dict[str, float]:
    """target -> median records per second, batches of `batch_size`."""
    from tests.rsyslog import Rsyslog

    batch = (BATCH * (batch_size // len(BATCH) + 1))[:batch_size]
    rates: dict[str, list[float]] = {"file": [], "syslog tcp -> rsyslogd": []}
    with tempfile.TemporaryDirectory() as tmp:
        server = Rsyslog(Path(tmp) / "rsyslog", "tcp")
        try:
            specs = {
                "file": (file, file.FileTarget(path=str(Path(tmp) / "out.jsonl"))),
                "syslog tcp -> rsyslogd": (
                    syslog,
                    syslog.SyslogTarget(host="127.0.0.1", port=server.port),
                ),
            }
            for _ in range(rounds):
                for name, (kind, spec) in specs.items():
                    t = time.perf_counter()
                    out = kind.deliver(spec, batch, CTX, time.monotonic() + 30)  # type: ignore[attr-defined]
                    assert out.accepted, out
                    rates[name].append(batch_size / (time.perf_counter() - t))
        finally:
            server.close()
    return {name: statistics.median(v) for name, v in rates.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    enc = encoding(args.rounds)
    base = enc["json"]
    print("| format | median us per record | ratio to json |")
    print("|---|---:|---:|")
    for name, us in enc.items():
        print(f"| {name} | {us:.2f} | {us / base:.1f} |")
    print()
    rates = delivery(args.rounds)
    print("| target, batches of 256 | median records/s |")
    print("|---|---:|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
