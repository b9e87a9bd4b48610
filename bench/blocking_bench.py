"""The blocking path's bound: the wired hook against hung blocking consumers.

Two blocking rules select PreToolUse: one runs `sleep 1000` with a 30 s timeout (so the
10 s cap decides), one an HTTP server that accepts and never answers (timeout 20 s).
Each run is the wired hook command through `sh -c`; the figure is the whole run's wall
time, max and median over N runs. Goal: at most 10.1 s, every time.
Usage: python bench/blocking_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.servers import Server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

REPO = Path(__file__).resolve().parent.parent
# the real client's PreToolUse payload, recorded by scripts/record_fixtures.py
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]
PAYLOAD = FIXTURE.read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

    server = Server("hang")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = fixture_env(root)
        folder = root / "config" / "agent-ways" / "sensors"
        (folder / "hung.yaml").write_text(
            "rules:\n"
            "  sleeper:\n    sections: [tool_call]\n    mode: blocking\n    timeout: 30s\n"
            "    dispatch: {command: {argv: [sleep, '1000']}}\n"
            "  silent-http:\n    sections: [tool_call]\n    mode: blocking\n    timeout: 20s\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n"
        )
        cmd = ["sh", "-c", hook_command(sys.executable, launcher_path())]
        subprocess.run(cmd, input=b"{}", env=env)  # build the index
        for _ in range(args.runs):
            t = time.perf_counter()
            r = subprocess.run(cmd, input=PAYLOAD, env=env, capture_output=True)
            times.append(time.perf_counter() - t)
            assert r.returncode == 0 and r.stdout == b""
        log = (root / "state" / "agent-ways" / "events.log").read_text().splitlines()
        kinds = [json.loads(x)["kind"] for x in log]
    server.close()
    print(
        f"blocking path against hung consumers, {args.runs} runs, python {sys.version.split()[0]}"
    )
    print()
    print("| figure | value | goal |")
    print("|---|---:|---|")
    print(f"| hook wall time, median | {statistics.median(times):.3f} s | |")
    print(f"| hook wall time, max | {max(times):.3f} s | at most 10.1 s every time |")
    print(f"| blocking timeouts logged | {kinds.count('blocking.timeout')} | {2 * args.runs} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
