"""The key tree's cost against the number of past epochs (issue 39 item 1).

For each of 10, 1,000 and 10,000 epochs, a fresh state root is brought to that epoch
(`Keyring.rollover(to=N)`: the path to it, as that many rollovers leave it), then:

    rollover      one `Keyring.rollover()` (a few fsync'd key files, and at every 4th
                  epoch a node's children and certificate), median of ROLLS
    start         a new process's first signature: `Keyring(...).sign(...)` in a fresh
                  `python -c` (import, rollover, key load, sign), the time inside it,
                  median of STARTS
    first cp      the bytes a tree's first checkpoint record adds for its key proof:
                  the JSON of the current epoch's path certificates
    certificates  how many certificates that path holds, and how many are on disk

Usage: python bench/keys_bench.py [--rolls N] [--starts N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ways_sensors.evidence.keys import Keyring  # noqa: E402
from ways_sensors.state.layout import Layout  # noqa: E402

START = (
    "import sys, time; t = time.perf_counter(); "
    "from ways_sensors.evidence.keys import Keyring; from ways_sensors.state.layout import Layout; "
    "Keyring(Layout(sys.argv[1]), epoch_seconds=3600).sign('x\\n', 'n'); "
    "print((time.perf_counter() - t) * 1000)"
)


def one(epochs: int, rolls: int, starts: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "state")
        ring = Keyring(Layout(state), epoch_seconds=3600)
        ring.ensure()
        ring.rollover(to=epochs)
        times = []
        for _ in range(rolls):
            t = time.perf_counter()
            ring.rollover()
            times.append((time.perf_counter() - t) * 1000)
        start = []
        for _ in range(starts):
            r = subprocess.run(
                [sys.executable, "-c", START, state], capture_output=True, text=True, check=True
            )
            start.append(float(r.stdout))
        path = ring.path_certificates(ring.epoch())
        return {
            "epoch": ring.epoch(),
            "rollover_ms": statistics.median(times),
            "start_ms": statistics.median(start),
            "first_cp_bytes": len(json.dumps(path)),
            "path_certs": len(path),
            "certs_on_disk": len(os.listdir(os.path.join(state, "keys", "nodes"))),
        }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rolls", type=int, default=15)
    ap.add_argument("--starts", type=int, default=9)
    args = ap.parse_args()
    head = (
        "epochs",
        "rollover, median ms",
        "start to first signature, median ms",
        "key proof in the first checkpoint, bytes",
        "certificates in it",
        "on disk",
    )
    print("| " + " | ".join(head) + " |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (10, 1_000, 10_000):
        r = one(n, args.rolls, args.starts)
        print(
            f"| {n:,} | {r['rollover_ms']:.2f} | {r['start_ms']:.1f} | "
            f"{r['first_cp_bytes']:,} | {r['path_certs']} | {r['certs_on_disk']:,} |"
        )


if __name__ == "__main__":
    main()
