"""The drain of spans: N spooled records (N/2 PreToolUse and their PostToolUse), masking
on, `chain: true`, `at_least_once`, to a loopback OTLP/HTTP receiver (a thread of this
process that parses each request: JSON, or protobuf with the official definitions),
with `signal: traces` in JSON, in protobuf, and with the logs signal, interleaved over
RUNS runs: records per second from the dispatcher's start to the last span (or log
record) at the receiver; medians and the traces/logs ratio. Beside the wall-clock rate,
records per CPU second of the dispatcher (its user + system time, /proc): what a shared
machine's load does not change much, and what one uncontended core would give at least
if the dispatcher's threads never overlapped (its waits, fsync, are not counted).

Then the encodings (`--encode-only` for this part alone): one batch of 512 such records
turned into spans (traces/export.py) and written as OTLP JSON (msgspec) and as protobuf
(formats/otlp_protobuf.py, pure Python), interleaved over 30 rounds: spans per second
of each, the medians and their ratio.

With --before DIR (an earlier tree: `git archive <commit> ways_sensors sensors | tar -x
-C DIR`), the before/after table instead: the traces (JSON) drain by that tree's
dispatcher and by this one's, interleaved over RUNS runs (each dispatcher run as
`python -c` with its tree first on sys.path): medians, the after/before ratio pair by
pair, and the load average before and after.

Usage: python bench/traces_bench.py [--records N] [--runs R] [--encode-only]
                                    [--before DIR [--case traces|traces-protobuf|logs]]
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
from batch_bench import Receiver
from dispatch_bench import PAYLOAD

WAYS = str(Path(sys.executable).parent / "ways")
REPO = Path(__file__).resolve().parent.parent
TREE = "import sys; sys.path.insert(0, sys.argv.pop(1)); from ways_sensors.cli import main; main()"


def command(tree: Path | None) -> list[str]:
    """The dispatcher's command: the installed `ways`, or a tree's own package."""
    return [WAYS] if tree is None else [sys.executable, "-c", TREE, str(tree)]


def cpu_seconds(pid: int) -> float:
    """User + system time of a live process, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drain(
    case: str, records: int, receiver: Receiver, tree: Path | None = None
) -> tuple[float, float]:
    signal, _, encoding = case.partition("-")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = fixture_env(root)
        cfg = root / "config" / "agent-ways"
        (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
        (cfg / "sensors" / "bench.yaml").write_text(
            "rules:\n  calls:\n    sections: [tool_call, tool_result]\n"
            "    delivery: at_least_once\n    chain: true\n    timeout: 30s\n"
            f"    dispatch: {{otlp: {{endpoint: '{receiver.endpoint}', signal: {signal}, "
            f"encoding: {encoding or 'json'}}}}}\n"
        )
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.state import spool

        sid = f"bench-{case}"
        for i in range(records // 2):
            common = {**PAYLOAD, "session_id": sid, "tool_use_id": f"toolu_{i:06d}"}
            cmd = {"command": f"grep -rn 'pattern {i}' src/ | head -{i % 50 + 1}"}
            call = {**common, "hook_event_name": "PreToolUse", "tool_input": cmd}
            result = {**common, "hook_event_name": "PostToolUse", "tool_input": cmd,
                      "tool_response": {"stdout": f"src/a.py:{i}: pattern {i}"}}  # fmt: skip
            for event, body in (("PreToolUse", call), ("PostToolUse", result)):
                spool.append(
                    sid, event, time.time_ns(), env["CLAUDE_PROJECT_DIR"], json.dumps(body).encode()
                )
        want = records // 2 if signal == "traces" else records
        start = receiver.spans if signal == "traces" else receiver.count

        def got() -> int:
            return (receiver.spans if signal == "traces" else receiver.count) - start

        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*command(tree), "sensors", "dispatch", "--session", sid],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while got() < want:
                if time.perf_counter() - t0 > 900 or proc.poll() is not None:
                    raise SystemExit(f"the {case} drain stopped at {got()} of {want}")
                time.sleep(0.005)
            wall = time.perf_counter() - t0
            return records / wall, records / cpu_seconds(proc.pid)
        finally:
            proc.kill()
            proc.wait()


def batch_records(n: int) -> list[dict]:
    """n records as a rule receives them: n/2 tool calls, then their results."""
    out: list[dict] = []
    for i in range(n):
        tid = f"toolu_{i % (n // 2):06d}"
        call = i < n // 2
        data = {"tool_name": "Bash", "tool_use_id": tid, "tool_kind": "shell"}
        if call:
            data["input"] = {"command": f"grep -rn 'pattern {i}' src/ | head -{i % 50 + 1}"}
        else:
            data.update(status="success", output={"stdout": f"src/a.py:{i}: pattern {i}"})
        out.append({"section": "tool_call" if call else "tool_result", "seq": i + 1,
                    "rule_seq": i + 1, "session_id": "bench", "agent": "claude-code",
                    "agent_id": None, "timestamp": f"2026-12-02T18:{i // 600 % 60:02d}:"
                    f"{i // 10 % 60:02d}.{i % 10}00Z", "data": data,
                    "chain": {"prev": "0" * 64, "hash": f"{i:064x}"}})  # fmt: skip
    return out


def encodings(rounds: int = 30) -> None:
    import msgspec

    from ways_sensors.formats import otlp_protobuf
    from ways_sensors.traces import export

    req = export.request(batch_records(512), "bench", "b", "r", [], "0")
    assert req is not None
    n = len(req["resourceSpans"][0]["scopeSpans"][0]["spans"])
    times: dict[str, list[float]] = {"json": [], "protobuf": []}
    for _ in range(rounds):
        for name, fn in (("json", msgspec.json.encode), ("protobuf", otlp_protobuf.encode)):
            t = time.perf_counter()
            fn(req)
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"encoding one batch of {n} spans, {rounds} interleaved rounds")
    print("| encoding | median spans/s |")
    print("|---|---:|")
    for k in ("json", "protobuf"):
        print(f"| {k} | {n / med[k]:,.0f} |")
    print(f"protobuf/json time: {med['protobuf'] / med['json']:.1f}x")


def before_after(before: Path, case: str, records: int, runs: int) -> None:
    trees = {"before": before.resolve(), "after": REPO}
    rates: dict[str, list[float]] = {k: [] for k in trees}
    per_cpu: dict[str, list[float]] = {k: [] for k in trees}
    load0 = os.getloadavg()
    receiver = Receiver()
    try:
        for _ in range(runs):
            for name, tree in trees.items():
                wall, cpu = drain(case, records, receiver, tree)
                rates[name].append(wall)
                per_cpu[name].append(cpu)
    finally:
        receiver.close()
    load1 = os.getloadavg()
    print(f"{case} drain of {records} records, before ({before}) and after (this tree),")
    print(f"{runs} interleaved runs; load average {load0[0]:.2f} before, {load1[0]:.2f} after")
    print("| tree | median records/s | runs | median records per dispatcher CPU second |")
    print("|---|---:|---|---:|")
    for name in trees:
        runs_ = ", ".join(f"{r:,.0f}" for r in rates[name])
        cpu = statistics.median(per_cpu[name])
        print(f"| {name} | {statistics.median(rates[name]):,.0f} | {runs_} | {cpu:,.0f} |")
    pairs = zip(rates["after"], rates["before"], strict=True)
    ratio = statistics.median(a / b for a, b in pairs)
    cpairs = zip(per_cpu["after"], per_cpu["before"], strict=True)
    cratio = statistics.median(a / b for a, b in cpairs)
    print(f"after/before, pair by pair: median {ratio:.2f} (per CPU second {cratio:.2f})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--encode-only", action="store_true")
    ap.add_argument("--before", type=Path, help="an earlier tree: only the before/after table")
    ap.add_argument("--case", default="traces", choices=("traces", "traces-protobuf", "logs"))
    args = ap.parse_args()
    if args.encode_only:
        encodings()
        return 0
    if args.before:
        before_after(args.before, args.case, args.records, args.runs)
        return 0
    receiver = Receiver()
    cases = ("traces", "traces-protobuf", "logs")
    rates: dict[str, list[float]] = {c: [] for c in cases}
    per_cpu: dict[str, list[float]] = {c: [] for c in cases}
    try:
        for _ in range(args.runs):
            for case in cases:
                wall, cpu = drain(case, args.records, receiver)
                rates[case].append(wall)
                per_cpu[case].append(cpu)
    finally:
        receiver.close()
    print(f"drain of {args.records} records ({args.records // 2} tool calls and their results),")
    print(f"masked, chained, at_least_once, to a loopback OTLP receiver; {args.runs} runs")
    print("| signal | median records/s | runs | median records per dispatcher CPU second |")
    print("|---|---:|---|---:|")
    for case in cases:
        runs = ", ".join(f"{r:,.0f}" for r in rates[case])
        cpu = statistics.median(per_cpu[case])
        print(f"| {case} | {statistics.median(rates[case]):,.0f} | {runs} | {cpu:,.0f} |")
    ratio = statistics.median(t / lg for t, lg in zip(rates["traces"], rates["logs"], strict=True))
    print(f"traces/logs, pair by pair: median {ratio:.2f}")
    print()
    encodings()
    return 0


if __name__ == "__main__":
    sys.exit(main())
