"""Hook latency, measured on the command exactly as `ways reconcile` wires it.

Four medians from one run, each command run through `sh -c` with a PreToolUse payload
on stdin, HOME and every XDG root pointing at a throwaway fixture install:

  python -c pass             the interpreter's own start-up (the baseline)
  ways --version             the console script pip generates (the seed's baseline)
  hook, no rule selects      the wired command; only the shipped (disabled) sensors
  hook hand-off, 20 files    the wired command; 20 user sensor files with async rules
                             selecting tool_call, so every run appends a spool entry
and, for comparison, the plain `ways hook sensors` console script with no rule.

The hand-off run holds the session's dispatch lock, as a running dispatcher would, so
each run measures the hand-off itself, not a dispatcher start (once per session).
Usage: python bench/hook_latency.py [--runs N]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env, measure, tool

REPO = Path(__file__).resolve().parent.parent
# the real client's PreToolUse payload, recorded by scripts/record_fixtures.py
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]
PAYLOAD = FIXTURE


def fixture(root: Path, sensors: int) -> dict[str, str]:
    env = fixture_env(root)
    folder = root / "config" / "agent-ways" / "sensors"
    for i in range(sensors):
        (folder / f"s{i:02d}.yaml").write_text(
            f"rules:\n  r:\n    sections: [tool_call, tool_result]\n"
            f"    where: {{data.tool_name: Bash}}\n"
            f"    dispatch: {{file: {{path: '{root}/out/{i}.jsonl'}}}}\n"
        )
    return env


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.launch import launcher_path

    py = sys.executable
    ways = str(Path(py).parent / "ways")
    wired = hook_command(py, launcher_path())
    payload = PAYLOAD
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        quiet = fixture(tmp / "quiet", 0)
        busy = fixture(tmp / "busy", 20)
        stdin = f" < {shlex.quote(str(payload))}"
        sid = json.loads(payload.read_text())["session_id"]
        lockdir = tmp / "busy" / "state" / "agent-ways" / "sessions" / sid
        lockdir.mkdir(parents=True)
        lock = os.open(lockdir / "dispatch.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)

        base = {
            "python -c pass": f"{shlex.quote(py)} -c pass{stdin}",
            "ways --version": f"{shlex.quote(ways)} --version > /dev/null{stdin}",
            "hook, no rule selects": f"{{ {wired}; }}{stdin}",
            "plain `ways hook sensors`, no rule": f"{shlex.quote(ways)} hook sensors{stdin}",
        }
        res = measure(base, quiet, runs=args.runs)
        res.update(
            measure({"hook hand-off, 20 files": f"{{ {wired}; }}{stdin}"}, busy, runs=args.runs)
        )
        entries = sum(p.read_bytes().count(b"WS1 ") for p in lockdir.glob("spool/*.seg"))

    order = [
        "python -c pass",
        "ways --version",
        "hook, no rule selects",
        "hook hand-off, 20 files",
        "plain `ways hook sensors`, no rule",
    ]
    print(
        f"hook latency, {args.runs} runs after 20 warm-up, by {tool()}; "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print()
    print("| command | median ms | min ms | max ms |")
    print("|---|---:|---:|---:|")
    for name in order:
        r = res[name]
        print(f"| {name} | {r['median']:.2f} | {r['min']:.2f} | {r['max']:.2f} |")
    p = res["python -c pass"]["median"]
    v = res["ways --version"]["median"]
    quiet_ms = res["hook, no rule selects"]["median"]
    busy_ms = res["hook hand-off, 20 files"]["median"]
    print()
    print(f"- no rule selects - python -c pass: {quiet_ms - p:+.2f} ms (goal <= +1.5)")
    print(f"- hand-off, 20 files - python -c pass: {busy_ms - p:+.2f} ms (goal <= +3)")
    print(f"- no rule selects - ways --version: {quiet_ms - v:+.2f} ms (seed budget <= +2)")
    print(f"- hand-off, 20 files - ways --version: {busy_ms - v:+.2f} ms (seed budget <= +5)")
    print(f"- spool entries written by the hand-off runs: {entries}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
