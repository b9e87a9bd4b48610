"""Everyday commands against the interpreter's start-up: `ways settings list` and the
sensors tab's first paint, in one interleaved run.

Per round, one run of each, in turn, so that on a shared machine every one meets the
same load (medians and ratios from the same rounds):

  python -c pass          the interpreter's start-up
  ways --version          the console script, nothing but the version
  ways settings list      every key of the shipped sensors and the user's sensor files
                          (--files N of --rules M rules each; default 10 of 5), as kept
                          by the previous run (ways_sensors/services/listcache.py)
  settings list, cold     the same with nothing kept (the first run after an edit)
  tab first paint         `ways sensors tui` in a pseudo-terminal, from the start of the
                          process until the table's first row (the name of the shipped
                          sensor) is on the screen; then `q`
  ways status             every rule's counters (loads every layer)
  ways settings set       one rule field written, alternating between two values
  ways sensors verify     one chained file of 20 records (reads no sensor file)

Each command's user + system CPU is given beside its wall time: on a shared machine the
CPU moves less with the load. The test suite runs these commands hundreds of times, so
their start-up is most of the fast lane's CPU (README). With --baseline DIR (another
checkout with its own .venv, e.g. `git clone -q . DIR && sh DIR/scripts/setup.sh`),
that checkout's `ways` runs the same commands in the same rounds, against its own
throwaway install.

The goals (issue 20): settings list within 3x `ways --version`; the tab's first paint
under 1.5 s. Usage: python bench/commands_bench.py [--runs N] [--baseline DIR] [--no-tab]
"""

from __future__ import annotations

import argparse
import os
import pty
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


CPU: dict[str, list[float]] = {}  # case -> user + system seconds of each run


def run_once(argv: list[str], env: dict[str, str], case: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if case:
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        CPU.setdefault(case, []).append(used)
    return wall


def install(root: Path, files: int, rules: int, ways: str) -> dict[str, str]:
    """A throwaway install with `files` user sensor files of `rules` rules each, one
    chained file for verify (a shipped sensor's audit rule, fed by `ways sensors fire`)."""
    env = fixture_env(root)
    env.pop("NO_COLOR", None)
    sensors = root / "config" / "agent-ways" / "sensors"
    for i in range(files):
        text = "".join(USER_RULE.format(j=j) for j in range(rules))
        (sensors / f"team-{i}.yaml").write_text(f"description: team file {i}\nrules:\n" + text)
    chained = root / "chained.jsonl"
    (sensors / "chained.yaml").write_text(
        "rules:\n  out:\n    sections: [tool_call]\n    chain: true\n"
        f"    dispatch: {{file: {{path: '{chained}'}}}}\n"
    )
    for _ in range(20):
        subprocess.run(
            [ways, "sensors", "fire", "chained/out", "--section", "tool_call"],
            env=env,
            capture_output=True,
            check=True,
        )
    listed = subprocess.run(
        [ways, "settings", "list"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert f"team-{files - 1}.rules.r{rules - 1}" in listed, "user files not loaded"
    return env


def commands(
    ways: str, env: dict[str, str], set_env: dict[str, str], tag: str = ""
) -> dict[str, Callable[[], float]]:
    """The commands the test suite runs most, for one checkout's `ways`. `settings set`
    writes in an install of its own (`set_env`): a sensor file that changes is a new
    key for the kept `settings list` of `env`."""
    chained = str(Path(env["HOME"]).parent / "chained.jsonl")
    key = "ways.sensors.team-0.rules.r0.timeout"
    values = iter(["3s", "4s"] * 100_000)
    return {
        f"ways --version{tag}": lambda: run_once([ways, "--version"], env, f"ways --version{tag}"),
        f"ways status{tag}": lambda: run_once([ways, "status"], env, f"ways status{tag}"),
        f"ways settings set{tag}": lambda: run_once(
            [ways, "settings", "set", key, next(values)], set_env, f"ways settings set{tag}"
        ),
        f"ways sensors verify{tag}": lambda: run_once(
            [ways, "sensors", "verify", chained], env, f"ways sensors verify{tag}"
        ),
    }


def cold(env: dict[str, str]) -> float:
    """`ways settings list` right after a sensor file changed: nothing kept applies."""
    shutil.rmtree(Path(env["XDG_CACHE_HOME"]) / "agent-ways" / "settings", ignore_errors=True)
    return run_once([WAYS, "settings", "list"], env, "settings list, cold")


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
    ap.add_argument("--baseline", type=Path, help="another checkout, with its own .venv")
    ap.add_argument("--no-tab", action="store_true", help="leave out the tab's first paint")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = install(Path(tmp) / "this", args.files, args.rules, WAYS)
        set_env = install(Path(tmp) / "this-set", args.files, args.rules, WAYS)
        cases: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: run_once(
                [sys.executable, "-c", "pass"], env, "python -c pass"
            ),
            **commands(WAYS, env, set_env),
            "ways settings list": lambda: run_once(
                [WAYS, "settings", "list"], env, "ways settings list"
            ),
            "settings list, cold": lambda: cold(env),
        }
        if not args.no_tab:
            cases["tab first paint"] = lambda: first_paint(env)
        if args.baseline is not None:
            other = str(args.baseline.resolve() / ".venv" / "bin" / "ways")
            benv = install(Path(tmp) / "baseline", args.files, args.rules, other)
            bset = install(Path(tmp) / "baseline-set", args.files, args.rules, other)
            cases.update(commands(other, benv, bset, f" ({args.baseline.name})"))
        for case in cases.values():  # warm-up: .pyc files, the page cache
            case()
        CPU.clear()
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, case in cases.items():
                times[name].append(case() * 1000)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(
        f"{args.runs} interleaved rounds, {args.files} user sensor files of {args.rules} rules;"
        " medians in ms (min..max), and user + system CPU"
    )
    for name, v in times.items():
        cpu = f"   cpu {statistics.median(CPU[name]) * 1000:6.1f}" if name in CPU else ""
        print(f"  {name:<36} {med[name]:8.1f}   ({min(v):.1f}..{max(v):.1f}){cpu}")
    ratio = med["ways settings list"] / med["ways --version"]
    print(f"settings list / ways --version: {ratio:.2f}x (goal: at most 3x)")
    if "tab first paint" in med:
        print(f"tab first paint: {med['tab first paint'] / 1000:.2f} s (goal: under 1.5 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
