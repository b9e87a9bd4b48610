"""The machine log's cost per append and per checkpoint (issue 35 item 6:
evidence/machinelog.py, evidence/tiles.py).

  append      `machinelog.add` of one checkpoint-sized note (about 450 bytes, as a
              session tree's checkpoint with no cosignature is), N times in a fresh
              state root: the flock, the tiles and entry bundle rewritten, the size
              committed. The log is signed once, at the first append (the cadence's
              60 s then holds it back). Median, 99th percentile and max per append,
              and the log's size on disk.
  sign        `machinelog.close` after one more append (a checkpoint of the whole log,
              no witness configured): the root from the tiles and one signature.

Usage: python bench/machinelog_bench.py [--entries N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = tmp + "/state"
        os.environ["XDG_CONFIG_HOME"] = tmp + "/config"
        from ways_sensors.evidence import machinelog
        from ways_sensors.state.layout import Layout

        layout = Layout()
        note = "ways.sensors/0123456789abcdef/bench/all/session-%06d\n12\n" + "A" * 44 + "\n"
        note += "\n\u2014 ways.sensors/0123456789abcdef/bench/all/session " + "B" * 96 + "\n"
        note += "x" * (450 - len(note.encode()))
        times = []
        for i in range(args.entries):
            t = time.perf_counter()
            machinelog.add(layout, [note % i])
            times.append(time.perf_counter() - t)
        first, rest = times[0], sorted(times[1:])
        machinelog.add(layout, [note % args.entries])
        t = time.perf_counter()
        machinelog.close(layout)
        sign = time.perf_counter() - t
        size = files = 0
        for folder, _, names in os.walk(machinelog.prefix(layout)):
            for n in names:
                files += 1
                size += os.path.getsize(os.path.join(folder, n))
        p99 = rest[int(len(rest) * 0.99)]
        print(f"entries: {args.entries + 1}")
        print(f"first append (makes the keys, signs): {first * 1e3:.2f} ms")
        print(
            f"append: median {statistics.median(rest) * 1e3:.2f} ms, "
            f"p99 {p99 * 1e3:.2f} ms, max {rest[-1] * 1e3:.2f} ms"
        )
        print(f"sign the whole log (close): {sign * 1e3:.2f} ms")
        print(f"on disk: {files} files, {size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
