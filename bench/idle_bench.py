"""The CPU an idle dispatcher burns: many rules, nothing to do.

A throwaway install with RULES enabled async rules (file consumers, `tool_call`), one
PreToolUse spooled and a real dispatcher started on it. Once every rule delivered its
record and the dispatcher has been quiet for SETTLE seconds, its CPU time (user +
system, psutil) is read over WINDOW seconds. Polling workers cost CPU in proportion to
the rules; workers that sleep until there is work cost next to nothing. With
`--settle 0 --window 2` the window is the two seconds right after the last delivery,
where the build loop polled its spool every 5 ms before it waited on a watch of it
(spoolwatch.py).

With --baseline DIR (an earlier commit's package folder) that code's dispatcher is
measured too, just before this tree's, for each number of rules.

Usage: python bench/idle_bench.py [--rules N ...] [--window S] [--settle S] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env
from batch_bench import dispatcher_argv  # this tree's dispatcher, or --baseline's

REPO = Path(__file__).resolve().parent.parent
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]
PAYLOAD = json.loads(FIXTURE.read_text())
SETTLE = 3.0


def sensor_text(rules: int, out: Path) -> str:
    lines = ["rules:"]
    for i in range(rules):
        lines += [
            f"  r{i:05d}:",
            "    sections: [tool_call]",
            "    timeout: 60s",  # 2,000 threads woken at once on a loaded machine
            f"    dispatch: {{file: {{path: '{out}/r{i:05d}.jsonl'}}}}",
        ]
    return "\n".join(lines) + "\n"


def delivered(out: Path) -> int:
    try:
        return len(os.listdir(out))
    except OSError:
        return 0


def idle_cpu(
    rules: int, window: float, baseline: str | None = None, settle: float = SETTLE
) -> tuple[float, float, int, int, float]:
    """(CPU seconds over `window` once idle, RSS MiB, threads, the session's cursor
    files, and the dispatcher's CPU seconds until every rule delivered its record) of a
    dispatcher with `rules` rules."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = fixture_env(root)
        cfg = root / "config" / "agent-ways"
        (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
        out = root / "out"
        out.mkdir()
        (cfg / "sensors" / "many.yaml").write_text(sensor_text(rules, out))
        sid = "bench-idle"
        body = json.dumps({**PAYLOAD, "session_id": sid})
        emit = (
            "import sys, time; from ways_sensors.state import spool; "
            "spool.append(sys.argv[1], 'PreToolUse', time.time_ns(), sys.argv[2], "
            "sys.argv[3].encode())"
        )
        subprocess.run(
            [sys.executable, "-c", emit, sid, env["CLAUDE_PROJECT_DIR"], body], env=env, check=True
        )
        proc = subprocess.Popen(
            dispatcher_argv(sid, baseline),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            end = time.monotonic() + 600
            while delivered(out) < rules:
                if time.monotonic() > end or proc.poll() is not None:
                    raise SystemExit(f"only {delivered(out)} of {rules} rules delivered")
                time.sleep(0.1)
            ps = psutil.Process(proc.pid)
            t = ps.cpu_times()
            busy = t.user + t.system
            time.sleep(settle)
            t0 = ps.cpu_times()
            time.sleep(window)
            t1 = ps.cpu_times()
            rss = ps.memory_info().rss / 2**20
            threads = ps.num_threads()
            cursors = len(list((root / "state").rglob("cursors/*")))
            return (t1.user - t0.user) + (t1.system - t0.system), rss, threads, cursors, busy
        finally:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--settle", type=float, default=SETTLE, help="seconds quiet before it")
    ap.add_argument("--rounds", type=int, default=1, help="each measure this many times")
    ap.add_argument("--baseline", help="an earlier commit's package folder: measured too")
    args = ap.parse_args()
    print(f"idle dispatcher, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print()
    print(
        f"| rules | CPU over {args.window:g} s, {args.settle:g} s after the last delivery "
        "| share of one core | RSS | threads "
        "| cursor files | CPU to deliver the first record to every rule |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.rules:
        bases = ([args.baseline] if args.baseline else []) + [None]
        for base in bases * args.rounds:  # interleaved: each round meets the same load
            cpu, rss, threads, cursors, busy = idle_cpu(n, args.window, base, args.settle)
            name = f"{n:,}" + (f" (before: {base})" if base else "")
            print(
                f"| {name} | {cpu:.3f} s | {100 * cpu / args.window:.2f} % | {rss:.1f} MiB "
                f"| {threads:,} | {cursors:,} | {busy:.2f} s |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
