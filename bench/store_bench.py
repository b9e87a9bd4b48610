"""The drain into the session store against the same drain into a file (issue 38).

Per run, on one throwaway install, N spooled PreToolUse records (each its own
tool_use_id and command; batch_bench's payload), one rule: `tool_call`, masking on,
`chain: true`, `at_least_once`, its target's default batch (512 records, no wait):

  file    `dispatch: {file: ...}`: the real dispatcher from its start to the last line
  store   `dispatch: {store: {path: ...}}`: the same, to the last row committed

Runs interleaved (file, store, file, ...); medians of records per second and their
ratio from the same runs. The goal: the store within 1.5x of the file.

Usage: python bench/store_bench.py [--records N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_bench import WAYS, install, payload

SID = "bench-store"


def stored(db: Path):
    """The rows committed, read off the session's row (a count(*) would read the whole
    table at every look, and compete with the dispatcher for the two cores)."""
    conn: list[sqlite3.Connection] = []

    def count() -> int:
        try:
            if not conn:
                conn.append(sqlite3.connect(f"file:{db}?mode=ro", uri=True))
            row = conn[0].execute("SELECT sum(records) FROM sessions").fetchone()
            return int(row[0] or 0)
        except sqlite3.Error:  # not made yet
            conn.clear()
            return 0

    return count


def drain(records: int, kind: str) -> float:
    """Records per second of the real dispatcher into `kind` (file or store)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, count = install(root, "file", False, None)
        if kind == "store":
            db = root / "store" / "sessions.db"
            sensor = root / "config" / "agent-ways" / "sensors" / "bench.yaml"
            text = sensor.read_text()
            start = text.index("dispatch: ")
            sensor.write_text(text[:start] + f"dispatch: {{store: {{path: '{db}'}}}}\n")
            count = stored(db)
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.state import spool

        project = env["CLAUDE_PROJECT_DIR"]
        for i in range(records):
            spool.append(SID, "PreToolUse", time.time_ns(), project, payload(SID, i))
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [WAYS, "sensors", "dispatch", "--session", SID], env=env, stdout=subprocess.DEVNULL
        )
        try:
            while count() < records:
                if time.perf_counter() - t0 > 900 or proc.poll() is not None:
                    raise SystemExit(f"the {kind} drain stopped at {count()} of {records}")
                time.sleep(0.005)
            return records / (time.perf_counter() - t0)
        finally:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rates: dict[str, list[float]] = {"file": [], "store": []}
    for _ in range(args.runs):
        for kind in rates:
            rates[kind].append(drain(args.records, kind))
    print(f"{args.runs} interleaved runs of {args.records:,} records; records/s, median (min..max)")
    med = {k: statistics.median(v) for k, v in rates.items()}
    for kind, values in rates.items():
        print(f"  {kind:<6} {med[kind]:8,.0f}   ({min(values):,.0f}..{max(values):,.0f})")
    print(f"file / store: {med['file'] / med['store']:.2f}x (goal: at most 1.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
