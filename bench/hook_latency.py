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

Then the fast path per agent: the same two cases (no rule selects; hand-off with 20
files) for each registered agent, its hook command as `ways reconcile --agent NAME`
wires it and a tool-call payload of its own (Codex and Gemini CLI: recorded from the
real clients, tests/fixtures/; Cursor and Copilot CLI: their documented shapes),
against `python -c pass` measured in the same run. These commands are run in turn, one
run of each per round, so that on a shared machine every one meets the same load.
With --before DIR (an earlier tree: `git archive <commit> ways_sensors sensors | tar -x
-C DIR`), only the before/after table: that tree's hook and this one's, each wired the
same way and run by this interpreter, on fixture installs of their own (each builds
its own index), no rule selects and the hand-off with 20 files, interleaved with
`python -c pass`: the medians and their differences come from the same rounds.

With --traceparent (and --before), the after tree's two cases once more with
TRACEPARENT in the hook's environment (Claude Code sets it when its tracing is on): the
hook reads it only on the hand-off, one environment lookup.

Usage: python bench/hook_latency.py [--runs N] [--agents-only]
                                    [--before DIR [--event E] [--traceparent]]
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
FIXTURES = REPO / "tests" / "fixtures"
# agent -> (fixture folder, its tool-call event); claude-code uses PAYLOAD
AGENT_CALLS = {
    "codex": ("codex-0.169.0", "PreToolUse"),
    "gemini": ("gemini-cli-0.61.0", "BeforeTool"),
    "cursor": ("cursor-docs", "preToolUse"),
    "copilot": ("copilot-docs", "PreToolUse"),
}


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


def agent_payload(agent: str, folder: Path) -> tuple[Path, str]:
    """A file holding one tool-call payload of `agent`, and its session id."""
    if agent == "claude-code":
        return PAYLOAD, json.loads(PAYLOAD.read_text())["session_id"]
    name, event = AGENT_CALLS[agent]
    for line in (FIXTURES / name / "hooks.jsonl").read_text().splitlines():
        p = json.loads(line)["payload"]
        if p.get("hook_event_name") == event:
            path = folder / f"{agent}.json"
            path.write_text(json.dumps(p))
            return path, p.get("session_id") or p["conversation_id"]
    raise LookupError(f"no {event} in the {agent} fixture")


def interleaved(commands: dict[str, str], env: dict[str, str], runs: int) -> dict[str, dict]:
    """Medians of each command, run in turn (one run of each, `runs` rounds, after 20
    warm-up rounds): on a shared, noisy machine every command meets the same load."""
    import statistics
    import subprocess
    import time

    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(20 + runs):
        for name, cmd in commands.items():
            t = time.perf_counter()
            subprocess.run(["sh", "-c", cmd], env=env, check=False)
            if i >= 20:
                times[name].append((time.perf_counter() - t) * 1000)
    return {name: {"median": statistics.median(t)} for name, t in times.items()}


def hold_dispatch_lock(state_home: Path, sid: str) -> int:
    """Hold the session's dispatch lock as a live dispatcher would: every hand-off run
    then measures the append, not a dispatcher start (once per session)."""
    lockdir = state_home / "agent-ways" / "sessions" / sid
    lockdir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lockdir / "dispatch.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def before_after(
    before: Path, runs: int, event: str = "PreToolUse", traceparent: bool = False
) -> None:
    """The earlier tree's hook against this one's, interleaved (see the docstring);
    `event`: the recorded payload of that event (a tool event: the fixture's rules
    select its section), its transcript_path naming the recorded transcript, which is
    on this machine (a hand-off that notes the transcript's size stats a real file)."""
    import statistics
    import subprocess
    import time

    from ways_sensors.commands.reconcile import hook_command

    py = sys.executable
    recorded = FIXTURE.parent / f"{event}.json"
    body = json.loads(recorded.read_text())
    sid = body["session_id"]
    trees = {"before": before.resolve(), "after": REPO}
    with tempfile.TemporaryDirectory() as tmp:
        transcript = next((FIXTURE.parent.parent / "transcript").glob("*.jsonl"))
        payload = Path(tmp) / f"{event}.json"
        payload.write_text(json.dumps({**body, "transcript_path": str(transcript)}))
        stdin = f" < {shlex.quote(str(payload))}"
        commands: dict[str, tuple[str, dict[str, str]]] = {
            "python -c pass": (f"{shlex.quote(py)} -c pass{stdin}", fixture(Path(tmp) / "p", 0))
        }
        spools = {}
        for label, tree in trees.items():
            launcher = str(tree / "ways_sensors" / "_launch.py")
            subprocess.run([py, "-m", "compileall", "-q", str(tree / "ways_sensors")], check=True)
            for case, files in (("no rule selects", 0), ("hand-off, 20 files", 20)):
                env = fixture(Path(tmp) / f"{label}-{files}", files)
                if files:
                    hold_dispatch_lock(Path(env["XDG_STATE_HOME"]), sid)
                    spools[label] = Path(env["XDG_STATE_HOME"]) / "agent-ways" / "sessions" / sid
                commands[f"{label}, {case}"] = (f"{{ {hook_command(py, launcher)}; }}{stdin}", env)
                if traceparent and label == "after":
                    traced = {**env, "TRACEPARENT": TRACEPARENT}
                    commands[f"traced, {case}"] = (commands[f"{label}, {case}"][0], traced)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(20 + runs):
            for name, (cmd, env) in commands.items():
                t = time.perf_counter()
                subprocess.run(["sh", "-c", cmd], env=env, check=False)
                if i >= 20:
                    times[name].append((time.perf_counter() - t) * 1000)
        spooled = {
            label: sum(p.read_bytes().count(b"WS1 ") for p in d.glob("spool/*.seg"))
            for label, d in spools.items()
        }
    med = {name: statistics.median(t) for name, t in times.items()}
    base = med["python -c pass"]
    print(
        f"before ({before}) and after (this tree), {event}, {runs} interleaved rounds"
        f" after 20 warm-up; python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print()
    print("| case | before, median ms | - python -c pass | after, median ms |"
          " - python -c pass | after - before |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| python -c pass | {base:.2f} | | | | |")
    for case in ("no rule selects", "hand-off, 20 files"):
        b, a = med[f"before, {case}"], med[f"after, {case}"]
        print(f"| {case} | {b:.2f} | {b - base:+.2f} | {a:.2f} | {a - base:+.2f} | {a - b:+.2f} |")
    if traceparent:
        import timeit

        from ways_sensors.hook import MAX_TRACEPARENT
        from ways_sensors.roots import posix

        os.environ["TRACEPARENT"] = TRACEPARENT  # posix.environ is the start-up copy: set both
        posix.environ[b"TRACEPARENT"] = TRACEPARENT.encode()
        lines = (  # the hook's two lines (hook.run, the hand-off), as they are written
            'tp = posix.environ.get(b"TRACEPARENT")\n'
            'trace = tp[:MAX_TRACEPARENT].decode("ascii", "replace") if tp else ""'
        )
        g = {"posix": posix, "MAX_TRACEPARENT": MAX_TRACEPARENT}
        each = [min(timeit.repeat(lines, globals=g, number=10_000, repeat=5)) / 10_000]
        print()
        print(
            f"- the hook's TRACEPARENT read, in process: {each[0] * 1e9:.0f} ns a call"
            " (best of 5 x 10,000)"
        )
        print()
        print("| case | after, median ms | after with TRACEPARENT, median ms | difference |")
        print("|---|---:|---:|---:|")
        for case in ("no rule selects", "hand-off, 20 files"):
            a, t = med[f"after, {case}"], med[f"traced, {case}"]
            print(f"| {case} | {a:.2f} | {t:.2f} | {t - a:+.2f} |")
    print()
    print(f"- spool entries written by the hand-off runs: {spooled}")


def per_agent(runs: int) -> None:
    """The no-select and hand-off medians of every agent's wired hook."""
    from ways_sensors import agents
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        quiet = fixture(tmp / "quiet", 0)
        busy = fixture(tmp / "busy", 20)
        quiet_cmds = {"python -c pass": f"{shlex.quote(py)} -c pass"}
        busy_cmds = {"python -c pass": f"{shlex.quote(py)} -c pass"}
        locks = []
        for agent in agents.names():
            path, sid = agent_payload(agent, tmp)
            wired = hook_command(py, launcher_path(), agent=agent)
            stdin = f" < {shlex.quote(str(path))}"
            quiet_cmds[agent] = f"{{ {wired}; }}{stdin}"
            busy_cmds[agent] = f"{{ {wired}; }}{stdin}"
            lockdir = tmp / "busy" / "state" / "agent-ways" / "sessions" / sid
            lockdir.mkdir(parents=True, exist_ok=True)
            lock = os.open(lockdir / "dispatch.lock", os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX)
            locks.append((agent, lockdir))
        res = interleaved(quiet_cmds, quiet, runs)
        handoff = interleaved(busy_cmds, busy, runs)
        spooled = {
            agent: sum(p.read_bytes().count(b"WS1 ") for p in d.glob("spool/*.seg"))
            for agent, d in locks
        }
    base = res["python -c pass"]["median"]
    busy_base = handoff["python -c pass"]["median"]
    print()
    print(
        f"fast path per agent, {runs} interleaved rounds after 20 warm-up;"
        f" python -c pass {base:.2f} ms"
    )
    print()
    print("| agent | no rule selects, median ms | - python -c pass | hand-off, 20 files,"
          " median ms | - python -c pass | entries spooled |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| python -c pass | {base:.2f} | | {busy_base:.2f} | | |")
    for agent in agents.names():
        q, h = res[agent]["median"], handoff[agent]["median"]
        print(
            f"| {agent} | {q:.2f} | {q - base:+.2f} | {h:.2f} | {h - busy_base:+.2f} |"
            f" {spooled[agent]} |"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--agents-only", action="store_true", help="only the per-agent table")
    ap.add_argument("--before", type=Path, help="an earlier tree: only the before/after table")
    ap.add_argument("--event", default="PreToolUse", help="with --before: the payload's event")
    ap.add_argument("--traceparent", action="store_true", help="with --before: also TRACEPARENT")
    args = ap.parse_args()
    if args.before:
        before_after(args.before, args.runs, args.event, args.traceparent)
        return 0
    if args.agents_only:
        per_agent(args.runs)
        return 0
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

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
    per_agent(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
