"""Timing whole commands by SPEC section 10's method: hyperfine where installed, else an
equivalent loop; 20 warm-up and 200 measured runs; medians compared within one run."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

WARMUP = 20
RUNS = 200


def measure(
    commands: dict[str, str], env: dict[str, str], runs: int = RUNS, warmup: int = WARMUP
) -> dict[str, dict[str, float]]:
    """Each name -> {"median", "mean", "min", "max"} in ms. Commands are `sh -c` strings."""
    if shutil.which("hyperfine"):
        return _hyperfine(commands, env, runs, warmup)
    return _loop(commands, env, runs, warmup)


def _hyperfine(commands, env, runs, warmup):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "h.json")
        argv = [
            "hyperfine",
            "-N",
            "--style",
            "none",
            "--warmup",
            str(warmup),
            "--runs",
            str(runs),
            "--export-json",
            out,
        ]
        for name, cmd in commands.items():
            argv += ["-n", name, f"sh -c '{cmd}'" if "'" not in cmd else _fail(cmd)]
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            data = json.load(f)
    return {
        r["command"]: {
            "median": r["median"] * 1000,
            "mean": r["mean"] * 1000,
            "min": r["min"] * 1000,
            "max": r["max"] * 1000,
        }
        for r in data["results"]
    }


def _fail(cmd):
    raise ValueError(f"single quotes are not supported in benchmark commands: {cmd}")


def _loop(commands, env, runs, warmup):
    out = {}
    for name, cmd in commands.items():
        times = []
        for i in range(warmup + runs):
            t = time.perf_counter()
            subprocess.run(["sh", "-c", cmd], env=env, check=False)
            if i >= warmup:
                times.append((time.perf_counter() - t) * 1000)
        out[name] = {
            "median": statistics.median(times),
            "mean": statistics.fmean(times),
            "min": min(times),
            "max": max(times),
        }
    return out


def tool() -> str:
    if shutil.which("hyperfine"):
        v = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout
        return v.strip()
    return "a subprocess loop (hyperfine not installed)"


def fixture_env(root) -> dict[str, str]:
    """A throwaway install under `root`: HOME, every XDG root and the project folder, the
    sensor folder made. PYTHONDONTWRITEBYTECODE is dropped: a real install has its .pyc."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "CLAUDE_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        CLAUDE_PROJECT_DIR=str(root / "proj"),
    )
    for d in (root / "home", root / "proj", root / "config" / "agent-ways" / "sensors"):
        d.mkdir(parents=True, exist_ok=True)
    return env
