"""What `tap.offer` costs a worker per batch: with no tap running, and with one.

The worker calls state/taps.py's `offer` once per batch, before its first attempt.
With no tap it answers from a cached look at the taps folder (refreshed at most every
LOOK_EVERY seconds: one listdir of a folder that does not exist); with a tap of the
rule it appends the batch's lines under an flock. Both are timed in-process over
CALLS calls, ROUNDS rounds, against encoding the same record once (pipeline.dumps,
which the worker does for every record anyway). Medians of the rounds, one run.

Usage: python bench/tap_bench.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ways_sensors.pipeline.stages import dumps  # noqa: E402
from ways_sensors.services import tap  # noqa: E402
from ways_sensors.state import taps  # noqa: E402

RECORD = json.loads(
    (sorted((REPO / "tests" / "fixtures").glob("records-v1/*.jsonl"))[0])
    .read_text()
    .splitlines()[0]
)


def per_call_ns(fn, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=20_000)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    line = dumps(RECORD)
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir(mode=0o700)
        results: dict[str, list[float]] = {"dumps one record": [], "offer, no tap": []}
        results["offer, one tap of the rule"] = []
        for _ in range(args.rounds):
            results["dumps one record"].append(per_call_ns(lambda: dumps(RECORD), args.calls))
            results["offer, no tap"].append(
                per_call_ns(lambda: taps.offer("a/b", [line], str(state)), args.calls)
            )
        t = tap.Tap(["a/b"], str(state))
        taps._seen = (-1e9, {})
        try:
            for _ in range(args.rounds):
                results["offer, one tap of the rule"].append(
                    per_call_ns(lambda: taps.offer("a/b", [line], str(state)), args.calls // 10)
                )
                os.ftruncate(t.fd, 0)  # the reader keeps up
        finally:
            t.close()
    base = statistics.median(results["dumps one record"])
    print(f"record: {len(line)} bytes; {args.rounds} rounds of {args.calls} calls")
    print("| per batch of one record | median us | vs dumps |")
    print("|---|---:|---:|")
    for name, values in results.items():
        m = statistics.median(values)
        print(f"| {name} | {m / 1000:.2f} | {m / base:.2f}x |")


if __name__ == "__main__":
    main()
