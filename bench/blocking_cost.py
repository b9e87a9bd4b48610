"""What a blocking rule costs the hook, measured against `python -c pass` in one run.

Four commands, each run through `sh -c` with the recorded PreToolUse payload (a Bash
call) on stdin, run in turn (one run of each per round, after 20 warm-up rounds), so
that on a shared machine every one meets the same load:

  python -c pass          the interpreter's own start-up (the baseline)
  no rule selects         the wired hook; only the shipped (disabled) sensors
  where does not match    one `mode: blocking` rule on tool_call whose `where` is
                          `data.tool_name: Read`: the payload decides it (prefilter.py)
  matches, /bin/true      the same rule on `data.tool_name: Bash`, dispatching to a
                          command target running /bin/true: records built, masked,
                          numbered, chained and sent, the hook waiting for the outcome

Each hook case has a fixture install of its own (HOME and every XDG root), its index
built before the rounds. Goals (issue 20): where-does-not-match at most 3 ms over no
rule selects; matches-/bin/true at most 25 ms over python -c pass.
With --baseline DIR (a checkout of another version, e.g. `git worktree add DIR <rev>`),
a fifth command runs that checkout's hook on the matching rule, in the same rounds: a
before/after in one run.

Usage: python bench/blocking_cost.py [--runs N] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

REPO = Path(__file__).resolve().parent.parent
# the real client's PreToolUse payload (a Bash call), recorded by scripts/record_fixtures.py
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]

RULES = {
    "where does not match": ("Read", "{file: {path: '%s/out.jsonl'}}"),
    "matches, /bin/true": ("Bash", "{command: {argv: [/bin/true]}}"),
}


def install(root: Path, rule: tuple[str, str] | None) -> dict[str, str]:
    env = fixture_env(root)
    if rule is not None:
        tool, dispatch = rule
        (root / "config" / "agent-ways" / "sensors" / "blk.yaml").write_text(
            "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
            f"    where: {{data.tool_name: {tool}}}\n"
            f"    dispatch: {dispatch % root if '%s' in dispatch else dispatch}\n"
        )
    return env


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--baseline", type=Path, help="another checkout's hook, matching rule")
    args = ap.parse_args()
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

    hook = hook_command(sys.executable, launcher_path())
    with tempfile.TemporaryDirectory() as tmp:
        cases: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
        }
        for name, rule in [("no rule selects", None), *RULES.items()]:
            root = Path(tmp) / name.replace(" ", "-").replace(",", "").replace("/", "")
            env = install(root, rule)
            cmd = ["sh", "-c", f"{hook} < {FIXTURE}"]
            subprocess.run(cmd, env=env, check=True)  # builds the index
            cases[name] = (cmd, env)
        if args.baseline is not None:
            launcher = args.baseline.resolve() / "ways_sensors" / "_launch.py"
            old = hook_command(sys.executable, str(launcher))
            root = Path(tmp) / "baseline"
            env = install(root, RULES["matches, /bin/true"])
            cmd = ["sh", "-c", f"{old} < {FIXTURE}"]
            subprocess.run(cmd, env=env, check=True)
            cases[f"matches, /bin/true ({args.baseline.name})"] = (cmd, env)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(20 + args.runs):
            for name, (cmd, env) in cases.items():
                t = time.perf_counter()
                subprocess.run(cmd, env=env, check=False)
                if i >= 20:
                    times[name].append((time.perf_counter() - t) * 1000)
        sent = Path(tmp) / "matches-bintrue" / "state" / "agent-ways" / "counters"
        delivered = sorted(p.name for p in sent.glob("*.json")) if sent.exists() else []
    med = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"blocking rule cost, {args.runs} interleaved rounds after 20 warm-up, "
        f"python {sys.version.split()[0]}, load average {_load()}"
    )
    print()
    print("| command | median ms |")
    print("|---|---:|")
    for name, m in med.items():
        print(f"| {name} | {m:.2f} |")
    print()
    nomatch = med["where does not match"] - med["no rule selects"]
    match = med["matches, /bin/true"] - med["python -c pass"]
    print(f"- where does not match - no rule selects: **{nomatch:+.2f} ms** (goal <= +3 ms)")
    print(f"- matches, /bin/true - python -c pass: **{match:+.2f} ms** (goal <= +25 ms)")
    print(f"- counters of the matching rule: {delivered or 'none'}")
    for name in med:
        if name.startswith("matches, /bin/true ("):
            before = med[name] - med["python -c pass"]
            print(f"- {name} - python -c pass: {before:+.2f} ms (this tree: {match:+.2f} ms)")
    return 0


def _load() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
