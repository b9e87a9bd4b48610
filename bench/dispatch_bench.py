"""Dispatcher figures on a throwaway install: latency, throughput and memory.

  latency     hook -> file consumer with a warm dispatcher: from starting the wired hook
              command to the record's line being in the consumer's file (p50, p99), over
              N events sent one after another
  throughput  10,000 spooled records drained to a file consumer by one dispatcher
  memory      the dispatcher's RSS while idle (warm, waiting) and its peak while draining

Usage: python bench/dispatch_bench.py [--events N] [--records N]
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

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

REPO = Path(__file__).resolve().parent.parent
# the real client's PreToolUse payload, recorded by scripts/record_fixtures.py
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]
PAYLOAD = json.loads(FIXTURE.read_text())


def fixture(root: Path) -> tuple[dict[str, str], Path]:
    env = fixture_env(root)
    cfg = root / "config" / "agent-ways"
    (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
    out = root / "out.jsonl"
    (cfg / "sensors" / "bench.yaml").write_text(
        f"rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    return env, out


def dispatcher_pid(root: Path, sid: str) -> int | None:
    info = root / "state" / "agent-ways" / "sessions" / sid / "dispatcher.json"
    for _ in range(500):
        try:
            return json.loads(info.read_text())["pid"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.01)
    return None


def count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def latency(events: int) -> tuple[list[float], float]:
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, out = fixture(root)
        cmd = ["sh", "-c", hook_command(sys.executable, launcher_path())]
        sid = "bench-latency"
        times = []
        idle_rss = 0.0
        for i in range(events + 5):
            body = json.dumps(
                {**PAYLOAD, "session_id": sid, "tool_use_id": f"toolu_{i:06d}"}
            ).encode()
            before = count_lines(out)
            t0 = time.perf_counter()
            subprocess.run(cmd, input=body, env=env, check=True)
            while count_lines(out) <= before:
                time.sleep(0.0005)
                if time.perf_counter() - t0 > 30:
                    raise SystemExit("a record never arrived")
            if i >= 5:  # the first ones start the dispatcher: not warm
                times.append((time.perf_counter() - t0) * 1000)
            if i == 4:
                time.sleep(1.0)
                pid = dispatcher_pid(root, sid)
                idle_rss = psutil.Process(pid).memory_info().rss / 2**20
            time.sleep(0.01)
        pid = dispatcher_pid(root, sid)
        if pid:
            psutil.Process(pid).kill()
        return times, idle_rss


def throughput(records: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, out = fixture(root)
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.state import spool

        sid = "bench-throughput"
        body = json.dumps({**PAYLOAD, "session_id": sid}).encode()
        for _ in range(records):
            spool.append(sid, "PreToolUse", time.time_ns(), env["CLAUDE_PROJECT_DIR"], body)
        ways = str(Path(sys.executable).parent / "ways")
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [ways, "sensors", "dispatch", "--session", sid],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ps = psutil.Process(proc.pid)
        peak = 0.0
        while count_lines(out) < records:
            if time.perf_counter() - t0 > 600:
                raise SystemExit("the drain did not finish in 10 minutes")
            try:
                peak = max(peak, ps.memory_info().rss / 2**20)
            except psutil.Error:
                break
            time.sleep(0.05)
        took = time.perf_counter() - t0
        proc.kill()
        proc.wait()
        return records / took, took, peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--records", type=int, default=10_000)
    args = ap.parse_args()
    times, idle_rss = latency(args.events)
    rate, took, peak = throughput(args.records)
    q = statistics.quantiles(times, n=100)
    print(f"dispatcher, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print()
    print("| figure | value | goal |")
    print("|---|---:|---|")
    print(
        f"| hook -> file consumer, warm dispatcher, p50 ({len(times)} events) "
        f"| {statistics.median(times):.1f} ms | under 50 ms |"
    )
    print(f"| hook -> file consumer, warm dispatcher, p99 | {q[98]:.1f} ms | under 250 ms |")
    print(
        f"| drain {args.records:,} spooled records to a file consumer | {took:.2f} s "
        f"({rate:,.0f} records/s) | |"
    )
    print(f"| dispatcher RSS, idle | {idle_rss:.1f} MiB | |")
    print(f"| dispatcher RSS, peak while draining | {peak:.1f} MiB | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
