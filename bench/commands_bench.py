"""Everyday commands against the interpreter's start-up: `ways settings list` and the
sensors tab's first paint, in one interleaved run.

Per round, one run of each, in turn, so that on a shared machine every one meets the
same load (medians and ratios from the same rounds):

  python -c pass          the interpreter's start-up
  ways --version          the console script, nothing but the version
  ways settings list      every key of the shipped sensors and the user's sensor files
                          (--files N of --rules M rules each; default 10 of 5), as kept
                          by the previous run (ways_sensors/listcache.py)
  settings list, cold     the same with nothing kept (the first run after an edit)
  tab first paint         `ways sensors tui` in a pseudo-terminal, from the start of the
                          process until the table's first row (the name of the shipped
                          sensor) is on the screen; then `q`

The goals (issue 20): settings list within 3x `ways --version`; the tab's first paint
under 1.5 s. Usage: python bench/commands_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

BIN = Path(sys.executable).parent
WAYS = str(BIN / "ways")
USER_RULE = """\
  r{j}:
    sections: [tool_call, tool_result]
    where: {{data.tool_kind: shell, data.command: "git *"}}
    timeout: 2s
    dispatch: {{http: {{url: "http://127.0.0.1:9/r{j}", headers: {{X-Team: ops}}}}}}
"""
PAINTED = b"risky-actions"  # a shipped sensor's name: the table has rows


def run_once(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def cold(env: dict[str, str]) -> float:
    """`ways settings list` right after a sensor file changed: nothing kept applies."""
    shutil.rmtree(Path(env["XDG_CACHE_HOME"]) / "agent-ways" / "settings", ignore_errors=True)
    return run_once([WAYS, "settings", "list"], env)


def first_paint(env: dict[str, str], limit: float = 60.0) -> float:
    """Seconds from the start of `ways sensors tui` until PAINTED is on its terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the tab on the pseudo-terminal
        os.execve(WAYS, [WAYS, "sensors", "tui"], {**env, "TERM": "xterm-256color"})
    t = time.perf_counter()
    seen = b""
    try:
        while time.perf_counter() - t < limit:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
            if PAINTED in seen:
                return time.perf_counter() - t
        raise RuntimeError("the tab never painted its table: " + repr(seen[-300:]))
    finally:
        try:
            os.write(fd, b"q")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
                select.select([fd], [], [], 0.1) and os.read(fd, 65536)
        except OSError:
            pass
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except OSError:
            pass
        os.close(fd)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--rules", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = fixture_env(Path(tmp))
        env.pop("NO_COLOR", None)
        sensors = Path(tmp) / "config" / "agent-ways" / "sensors"
        for i in range(args.files):
            rules = "".join(USER_RULE.format(j=j) for j in range(args.rules))
            (sensors / f"team-{i}.yaml").write_text(f"description: team file {i}\nrules:\n" + rules)
        listed = subprocess.run(
            [WAYS, "settings", "list"], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert f"team-{args.files - 1}.rules.r{args.rules - 1}" in listed, "user files not loaded"
        cases = {
            "python -c pass": lambda: run_once([sys.executable, "-c", "pass"], env),
            "ways --version": lambda: run_once([WAYS, "--version"], env),
            "ways settings list": lambda: run_once([WAYS, "settings", "list"], env),
            "settings list, cold": lambda: cold(env),
            "tab first paint": lambda: first_paint(env),
        }
        for case in cases.values():  # warm-up: .pyc files, the page cache
            case()
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, case in cases.items():
                times[name].append(case() * 1000)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(
        f"{args.runs} interleaved rounds, {args.files} user sensor files of {args.rules} rules;"
        " medians in ms (min..max)"
    )
    for name, v in times.items():
        print(f"  {name:<20} {med[name]:8.1f}   ({min(v):.1f}..{max(v):.1f})")
    ratio = med["ways settings list"] / med["ways --version"]
    print(f"settings list / ways --version: {ratio:.2f}x (goal: at most 3x)")
    print(f"tab first paint: {med['tab first paint'] / 1000:.2f} s (goal: under 1.5 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
