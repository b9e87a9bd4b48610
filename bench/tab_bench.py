"""What the sensors tab does every second, with many rules: its refresh's CPU time, and
the whole tab's CPU while it sits idle.

A throwaway install with RULES rules in one sensor file and a counters file for each
(written a minute ago, as after a session). The tab's once-a-second `tick`, when no
sensor file changed, takes a status snapshot (counters, dead letters, dispatchers, the
events tail) and fills every row's counts; this measures exactly that work
(services.status.snapshot + tui.rows.count), in a fresh process per package, TICKS
ticks after a first one, as process CPU time per tick (median). With --baseline DIR
(the package of an earlier commit, e.g. `git archive <commit> ways_sensors | tar -x -C
DIR`) the same ticks run on that code too, in the same install, for a before/after ratio.

The whole tab: the real `ways sensors tui` in a tmux pane (TERM xterm-256color, 160x48,
a tmux server of its own), in the same install; once the table is on screen and
SETTLE seconds have passed, the tab process's CPU time (user + system, psutil) over
WINDOW seconds with nothing changing: the data work, Textual's re-render and the
terminal output together. With --baseline, the tab of that code too, interleaved,
RUNS times each; medians.

Usage: python bench/tab_bench.py [--rules N] [--ticks T] [--baseline DIR] [--window S]
                                 [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

REPO = Path(__file__).resolve().parent.parent

TICKS = r"""
import json, statistics, sys, time
from ways_sensors.config.layers import load
from ways_sensors.services import catalog, status
from ways_sensors.tui import rows as model
cat = load()
rows = model.build(catalog.listing(cat=cat))
def tick():
    snap = status.snapshot(cat, events_tail=3)
    model.count(rows, snap)
tick()
cpu = []
for _ in range(int(sys.argv[1])):
    t = time.process_time()
    tick()
    cpu.append(time.process_time() - t)
print(json.dumps(statistics.median(cpu)))
"""


def install(root: Path, rules: int) -> dict[str, str]:
    env = fixture_env(root)
    lines = ["rules:"]
    for i in range(rules):
        lines += [
            f"  r{i:05d}:",
            "    sections: [tool_call]",
            f"    dispatch: {{file: {{path: '{root}/out/r{i:05d}.jsonl'}}}}",
        ]
    (root / "config" / "agent-ways" / "sensors" / "many.yaml").write_text("\n".join(lines) + "\n")
    counters = root / "state" / "agent-ways" / "counters"
    counters.mkdir(parents=True)
    for p in (root / "state", root / "state" / "agent-ways", counters):
        p.chmod(0o700)
    old = time.time() - 60
    for i in range(rules):
        path = counters / f"many.r{i:05d}.json"
        path.write_text(json.dumps({"dispatched": 3, "delivered": 3}))
        path.chmod(0o600)
        os.utime(path, (old, old))
    return env


def ticks(env: dict[str, str], package_root: Path, n: int) -> float:
    env = {**env, "PYTHONPATH": str(package_root)}
    r = subprocess.run(
        [sys.executable, "-c", TICKS, str(n)], env=env, capture_output=True, text=True, check=True
    )
    return float(r.stdout)


SETTLE = 3.0
TAB = "import sys; from ways_sensors.cli import main; sys.exit(main())"


def tab_cpu(env: dict[str, str], package_root: Path, window: float, cwd: Path) -> float:
    """The whole tab's CPU seconds over `window` idle, under tmux (module docstring)."""
    sock = str(cwd / f"tmux-{os.getpid()}-{time.monotonic_ns()}.sock")
    env = {**env, "PYTHONPATH": str(package_root), "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k != "TMUX")
    cmd = f"exec env {exports} {shlex.quote(sys.executable)} -c {shlex.quote(TAB)} sensors tui"

    def tmux(*args: str) -> str:
        argv = ["tmux", "-S", sock, "-f", "/dev/null", *args]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    tmux("new-session", "-d", "-s", "tab", "-x", "160", "-y", "48", "-c", str(cwd), cmd)
    try:
        end = time.monotonic() + 120
        while "SENSOR / RULE" not in tmux("capture-pane", "-p", "-t", "tab"):
            if time.monotonic() > end:
                raise SystemExit("the tab never showed its table")
            time.sleep(0.2)
        proc = psutil.Process(int(tmux("display", "-p", "-t", "tab", "#{pane_pid}").strip()))
        time.sleep(SETTLE)
        t0 = proc.cpu_times()
        time.sleep(window)
        t1 = proc.cpu_times()
        return (t1.user - t0.user) + (t1.system - t0.system)
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=2000)
    ap.add_argument("--ticks", type=int, default=11)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    whole: dict[str, list[float]] = {"now": [], "before": []}
    with tempfile.TemporaryDirectory() as tmp:
        env = install(Path(tmp), args.rules)
        now = ticks(env, REPO, args.ticks)
        before = ticks(env, args.baseline, args.ticks) if args.baseline else None
        for _ in range(args.runs):
            if args.baseline:
                whole["before"].append(tab_cpu(env, args.baseline, args.window, Path(tmp)))
            whole["now"].append(tab_cpu(env, REPO, args.window, Path(tmp)))
            print(f"  whole tab: {whole}", file=sys.stderr, flush=True)
    print(f"sensors tab refresh, {args.rules:,} rules, python {sys.version.split()[0]}")
    print()
    print("| code | CPU per tick (median) | per 10 s idle |")
    print("|---|---:|---:|")
    if before is not None:
        print(f"| before ({args.baseline}) | {before * 1000:.0f} ms | {before * 10:.2f} s |")
    print(f"| this tree | {now * 1000:.0f} ms | {now * 10:.2f} s |")
    if before:
        print(f"\nratio before/after: {before / now:.2f}")
    print()
    print(f"| the whole tab under tmux, {args.window:g} s idle (median of {args.runs}) | CPU |")
    print("|---|---:|")
    med = {k: statistics.median(v) for k, v in whole.items() if v}
    if "before" in med:
        print(f"| before ({args.baseline}) | {med['before']:.2f} s |")
    print(f"| this tree | {med['now']:.2f} s |")
    if "before" in med and med["now"]:
        print(f"\nratio before/after: {med['before'] / med['now']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
