"""`ways sessions search` beside `agentsview session search` on the same sessions
(issue 38).

The corpus is agentsview_bench's: N copies of the recorded Claude Code session, each its
own session id, its prompt and command numbered (`module_<i>`, `hello-from-mock-<i>`).
agentsview syncs it (`sync --full`) and ways imports it (`ways sessions import`); then,
in one network namespace with nothing but loopback (`unshare -n`: agentsview reaches
nothing off the machine), agentsview's daemon is started, because `agentsview session
search` reads through it only, and each query runs as both whole commands, by turns, R
times; medians per query, and the ratio of the medians' sum.

Both search every session: agentsview is given --include-automated, --include-one-shot
and --include-children (it leaves the recorded session out of its default answers as
one-shot) and both ask for at most 50 results, as JSON. Each query's answer is checked:
found or not, as it must be, so a fast empty answer cannot pass for a search.

Usage: python bench/agentsview_search_bench.py --agentsview PATH [--sessions N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agentsview_bench import throwaway

ALL = ["--include-automated", "--include-one-shot", "--include-children"]
# (what it is, ways' arguments, agentsview's arguments, whether it finds anything)
QUERIES = [
    ("a rare prompt", ["module_777,"], ["module_777,"], True),
    ("a command's output (11 sessions)", ["hello-from-mock-42"], ["hello-from-mock-42"], True),
    (
        "a rare prompt, one agent",
        ["module_321,", "--agent", "claude-code"],
        ["module_321,", "--agent", "claude"],
        True,
    ),
    ("a phrase in every session", ["Run the tests of"], ["Run the tests of"], True),
    ("no match", ["zqxjv-none"], ["zqxjv-none"], False),
]


def inside(args: argparse.Namespace) -> int:
    """Run in the namespace: loopback up, agentsview's daemon started, the queries."""
    env = dict(os.environ)
    env.pop("AGENTSVIEW_NO_DAEMON", None)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    av, ways = args.agentsview, str(Path(sys.executable).parent / "ways")
    subprocess.run([av, "daemon", "start"], env=env, capture_output=True, check=True)
    try:
        _wait_ready(av, env)
        rows = []
        for name, wq, aq, want in QUERIES:
            w_times, a_times = [], []
            for _ in range(args.runs):
                took, out = _timed([ways, "sessions", "search", *wq, "--json"], env)
                w_times.append(took)
                w_hits = {h["session_id"] for h in json.loads(out)}
                took, out = _timed([av, "session", "search", *aq, "--json", *ALL], env)
                a_times.append(took)
                a_hits = {m["session_id"] for m in json.loads(out)["matches"]}
            for who, hits in (("ways", w_hits), ("agentsview", a_hits)):
                if bool(hits) != want:
                    raise SystemExit(f"{who} answered {name!r} with {len(hits)} sessions")
            rows.append((name, statistics.median(w_times), statistics.median(a_times)))
    finally:
        subprocess.run([av, "daemon", "stop"], env=env, capture_output=True)
    print(f"{'query':<34} {'ways':>9} {'agentsview':>11} {'ratio':>6}")
    for name, w, a in rows:
        print(f"{name:<34} {w * 1000:7.1f} ms {a * 1000:8.1f} ms {w / a:6.2f}")
    w_sum, a_sum = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"sum of the medians: ways / agentsview {w_sum / a_sum:.2f}x (goal: at most 1x)")
    return 0


def _wait_ready(av: str, env: dict[str, str]) -> None:
    """Until the daemon answers and holds every synced session."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:8080/api/ping", timeout=2):
                pass
            r = subprocess.run(
                [av, "session", "search", "module_1,", "--json", *ALL],
                env=env,
                capture_output=True,
                text=True,
            )
            if r.returncode == 0 and json.loads(r.stdout)["matches"]:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise SystemExit("agentsview's daemon did not answer within 120 s")


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - t
    if r.returncode not in (0, 1):  # 1: nothing found
        raise SystemExit(f"{argv[0]} failed: {r.stderr[-300:]}")
    return took, r.stdout or "[]"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agentsview", required=True, metavar="PATH")
    ap.add_argument("--sessions", type=int, default=1600)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        return inside(args)
    root, env, lines = throwaway(args.sessions)
    ways = str(Path(sys.executable).parent / "ways")
    print(f"corpus: {args.sessions:,} Claude Code sessions, {lines:,} transcript lines")
    r = subprocess.run(
        ["unshare", "-n", args.agentsview, "sync", "--full"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-500:]
    r = subprocess.run(
        [ways, "sessions", "import", "--agent", "claude-code", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-500:]
    print(f"ways stored {json.loads(r.stdout)['records']:,} records")
    me = [sys.executable, __file__, "--inside", "--agentsview", args.agentsview]
    r = subprocess.run(["unshare", "-n", *me, "--runs", str(args.runs)], env=env)
    shutil.rmtree(root, ignore_errors=True)
    return r.returncode


if __name__ == "__main__":
    raise SystemExit(main())
