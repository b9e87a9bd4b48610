"""`ways status` with and without records owed: what its health costs.

One throwaway install, one rule (`tool_call`, at_least_once, an http target on a
loopback port nobody listens on: every attempt fails, nothing is ever delivered), N
spooled PreToolUse records built into the session's journal by the real dispatcher,
which is then killed: the N records stay owed. Per round, in turn:

  status, owed N      `ways status --json` (its health scans the journal past the
                      rule's cursor: services/owed.py)
  status, owed 0      the same command on a second install with no session
  baseline            with --baseline DIR, that checkout's `ways status --json` on the
                      same two installs (a tree before the health: PYTHONPATH=DIR)

Medians of wall time from the same rounds. Usage:
python bench/status_bench.py [--records N] [--runs R] [--baseline DIR]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env
from batch_bench import WAYS, payload

SID = "bench-status"
RULE = (
    "rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
    "    dispatch: {http: {url: 'http://127.0.0.1:9/in'}}\n"
)


def owing(root: Path, records: int) -> dict[str, str]:
    """An install whose rule owes `records` built records (module docstring)."""
    env = fixture_env(root)
    (root / "config" / "agent-ways" / "sensors" / "bench.yaml").write_text(RULE)
    if not records:
        return env
    os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
    from ways_sensors.state import spool

    for i in range(records):
        spool.append(SID, "PreToolUse", time.time_ns(), env["CLAUDE_PROJECT_DIR"], payload(SID, i))
    build = root / "state" / "agent-ways" / "sessions" / SID / "build.json"
    proc = subprocess.Popen([WAYS, "sensors", "dispatch", "--session", SID], env=env)
    try:
        end = time.monotonic() + 600
        while time.monotonic() < end:
            try:
                if json.loads(build.read_text()).get("seq", 0) >= records:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        else:
            raise SystemExit("the journal was not built")
    finally:
        proc.kill()
        proc.wait()
    return env


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline", metavar="DIR")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        busy = owing(Path(tmp) / "busy", args.records)
        idle = owing(Path(tmp) / "idle", 0)
        check = subprocess.run([WAYS, "status", "--json"], env=busy, capture_output=True)
        [rule] = [r for r in json.loads(check.stdout)["rules"] if r["rule"] == "bench/calls"]
        print(f"owed as status counts it: {rule['health']['owed']} of {args.records}")
        argvs = {"this tree": [WAYS, "status", "--json"]}
        if args.baseline:
            code = f"import sys; sys.path.insert(0, {args.baseline!r}); "
            code += "from ways_sensors.cli import main; sys.exit(main())"
            argvs["baseline"] = [sys.executable, "-c", code, "status", "--json"]
        got: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for who, argv in argvs.items():
                for label, env in (("owed N", busy), ("owed 0", idle)):
                    got.setdefault((who, label), []).append(timed(argv, env))
        print(f"{'median ms':<24}" + "".join(f"{w:>14}" for w in argvs))
        for label in ("owed N", "owed 0"):
            row = "".join(f"{statistics.median(got[(w, label)]):>14.1f}" for w in argvs)
            print(f"status, {label:<16}" + row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
