"""Batched delivery figures on a throwaway install: drain rates and hook -> consumer latency.

  drain       N spooled PreToolUse records (each with its own tool_use_id and command),
              masking on, `chain: true`, `at_least_once`: one dispatcher, from its start
              to the last record at the consumer. To a file target and to a loopback
              OTLP/HTTP receiver (a thread of this process that parses each request's
              JSON and counts its log records), each with the target's default batch
              (file 512 records, no wait; otlp 512, 200 ms) and with `batch:
              {max_records: 1}` (one record per attempt, as before batching). RUNS runs
              of each, interleaved; medians, and the batched/unbatched ratios. Being
              chained, every batch also ends with a signed checkpoint (evidence/): the
              consumers count section records only, so a rate is records/s with
              checkpoints on.
  baseline    with --baseline DIR (the package of an earlier commit, e.g. from `git
              archive <commit> ways_sensors | tar -x -C DIR`): the same file drains
              (batched, and one record per attempt: a cursor commit per record) by that
              code's dispatcher, in the same runs, for before/after ratios.
  latency     hook -> consumer with a warm dispatcher: from starting the wired hook
              command to the record being at the consumer (the file's line, the
              receiver's log record), EVENTS events one after another, default batches.

Usage: python bench/batch_bench.py [--records N] [--runs R] [--events N] [--baseline DIR]
                                  [--target file|otlp]   (default: both)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env
from dispatch_bench import PAYLOAD, dispatcher_pid

WAYS = str(Path(sys.executable).parent / "ways")
CHECKPOINT = b'\n{"schema":"ways.sensor.checkpoint/'  # a checkpoint line's start


class Receiver:
    """A loopback OTLP/HTTP receiver: 200 `{}` to every POST, counting the log records
    of section records (and the spans of a traces request)."""

    def __init__(self) -> None:
        self.count = 0  # log records, checkpoints left out
        self.spans = 0
        self.requests = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.headers.get("content-type") == "application/x-protobuf":
                    return self._protobuf(body)
                req = json.loads(body)
                n = sum(
                    lr.get("eventName") != "ways.sensor.checkpoint"
                    for rl in req.get("resourceLogs", [])
                    for sl in rl.get("scopeLogs", [])
                    for lr in sl.get("logRecords", [])
                )
                spans = sum(  # a traces request (traces_bench.py)
                    len(ss.get("spans", []))
                    for rs in req.get("resourceSpans", [])
                    for ss in rs.get("scopeSpans", [])
                )
                with outer.lock:
                    outer.count += n
                    outer.spans += spans
                    outer.requests += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def _protobuf(self, body: bytes) -> None:
                """An `encoding: protobuf` request, parsed by the official definitions."""
                from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
                    ExportLogsServiceRequest,
                )
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                    ExportTraceServiceRequest,
                )

                n = spans = 0
                if self.path.endswith("/v1/traces"):
                    msg = ExportTraceServiceRequest.FromString(body)
                    spans = sum(len(ss.spans) for rs in msg.resource_spans for ss in rs.scope_spans)
                else:
                    logs = ExportLogsServiceRequest.FromString(body)
                    n = sum(lr.event_name != "ways.sensor.checkpoint" for rl in logs.resource_logs
                            for sl in rl.scope_logs for lr in sl.log_records)  # fmt: skip
                with outer.lock:
                    outer.count += n
                    outer.spans += spans
                    outer.requests += 1
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class LineCounter:
    """Lines appended to a file, read incrementally (the drain must not pay for rereads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.count = 0

    def __call__(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return 0
        data = data[: data.rfind(b"\n") + 1]  # whole lines only
        self.offset += len(data)
        self.count += data.count(b"\n") - (b"\n" + data).count(CHECKPOINT)  # line starts
        return self.count


def install(root: Path, target: str, single: bool, receiver: Receiver | None) -> tuple:
    """A fixture install with one rule; returns (env, the consumer's count function)."""
    env = fixture_env(root)
    cfg = root / "config" / "agent-ways"
    (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
    out = root / "out.jsonl"
    if target == "file":
        dispatch = f"{{file: {{path: '{out}'}}}}"
        count = LineCounter(out)
    else:
        assert receiver is not None
        dispatch = f"{{otlp: {{endpoint: '{receiver.endpoint}'}}}}"
        start = receiver.count

        def count() -> int:
            return receiver.count - start

    batch = "    batch: {max_records: 1}\n" if single else ""
    (cfg / "sensors" / "bench.yaml").write_text(
        "rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
        f"    chain: true\n    timeout: 30s\n{batch}    dispatch: {dispatch}\n"
    )
    return env, count


def payload(sid: str, i: int) -> bytes:
    data = {
        **PAYLOAD,
        "session_id": sid,
        "tool_use_id": f"toolu_{i:06d}",
        "tool_input": {"command": f"grep -rn 'pattern {i}' src/ | head -{i % 50 + 1}"},
    }
    return json.dumps(data).encode()


def dispatcher_argv(sid: str, baseline: str | None) -> list[str]:
    if baseline is None:
        return [WAYS, "sensors", "dispatch", "--session", sid]
    code = f"import sys; sys.path.insert(0, {baseline!r}); from ways_sensors.cli import main; "
    return [
        sys.executable,
        "-c",
        code + "sys.exit(main())",
        "sensors",
        "dispatch",
        "--session",
        sid,
    ]


def drain(
    target: str, records: int, single: bool, receiver: Receiver | None, baseline: str | None = None
) -> float:
    """Records per second, from the dispatcher's start to the last record's arrival."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, count = install(root, target, single, receiver)
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.state import spool

        sid = "bench-drain"
        for i in range(records):
            spool.append(
                sid, "PreToolUse", time.time_ns(), env["CLAUDE_PROJECT_DIR"], payload(sid, i)
            )
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            dispatcher_argv(sid, baseline),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while count() < records:
                if time.perf_counter() - t0 > 900 or proc.poll() is not None:
                    raise SystemExit(f"the {target} drain stopped at {count()} of {records}")
                time.sleep(0.005)
            return records / (time.perf_counter() - t0)
        finally:
            proc.kill()
            proc.wait()


def latency(target: str, events: int, receiver: Receiver | None) -> list[float]:
    """Milliseconds from starting the wired hook to the record at the consumer."""
    from ways_sensors.commands.reconcile import hook_command
    from ways_sensors.dispatch.launch import launcher_path

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, count = install(root, target, False, receiver)
        cmd = ["sh", "-c", hook_command(sys.executable, launcher_path())]
        sid = f"bench-latency-{target}"
        times = []
        for i in range(events + 5):
            before = count()
            t0 = time.perf_counter()
            subprocess.run(cmd, input=payload(sid, i), env=env, check=True)
            while count() <= before:
                time.sleep(0.0005)
                if time.perf_counter() - t0 > 30:
                    raise SystemExit("a record never arrived")
            if i >= 5:  # the first ones start the dispatcher: not warm
                times.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.01)
        pid = dispatcher_pid(root, sid)
        if pid:
            os.kill(pid, 9)
        return times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--baseline", help="an earlier commit's package folder, for the file drain")
    ap.add_argument("--target", choices=["file", "otlp"], help="only this target")
    args = ap.parse_args()
    targets = (args.target,) if args.target else ("file", "otlp")
    receiver = Receiver()
    rates: dict[tuple[str, bool], list[float]] = {}
    try:
        for _ in range(args.runs):
            for target in targets:
                for single in (False, True):
                    rate = drain(target, args.records, single, receiver)
                    rates.setdefault((target, single), []).append(rate)
                    print(f"  {target} {'one' if single else 'batched'}: {rate:,.0f}/s", flush=True)
            if args.baseline and "file" in targets:
                for single in (False, True):  # one per attempt: a cursor commit per record
                    rate = drain("file", args.records, single, None, args.baseline)
                    rates.setdefault(("baseline", single), []).append(rate)
                    kind = "one" if single else "batched"
                    print(f"  file {kind}, baseline: {rate:,.0f}/s", flush=True)
        lat = {t: latency(t, args.events, receiver) for t in targets}
    finally:
        receiver.close()
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"batched delivery, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print()
    print(
        f"| drain {args.records:,} records (median of {args.runs}) | batched | one per attempt "
        "| ratio |"
    )
    print("|---|---:|---:|---:|")
    labels = {"file": "file target", "otlp": "loopback OTLP receiver"}
    for target, label in ((t, labels[t]) for t in targets):
        b, one = med[(target, False)], med[(target, True)]
        print(f"| {label} | {b:,.0f} records/s | {one:,.0f} records/s | {b / one:.1f}x |")
    if args.baseline and "file" in targets:
        print()
        print("| file drain, this tree vs before | batched | one per attempt |")
        print("|---|---:|---:|")
        for name, key in (("this tree", "file"), (f"before ({args.baseline})", "baseline")):
            b, one = med[(key, False)], med[(key, True)]
            print(f"| {name} | {b:,.0f} records/s | {one:,.0f} records/s |")
        for single in (False, True):
            r = med[("file", single)] / med[("baseline", single)]
            print(f"| ratio, {'one per attempt' if single else 'batched'} | {r:.2f}x | |")
    print()
    print("| hook -> consumer, warm dispatcher | p50 | p99 |")
    print("|---|---:|---:|")
    for target, label in ((t, labels[t]) for t in targets):
        q = statistics.quantiles(lat[target], n=100)
        print(
            f"| {label} ({len(lat[target])} events) | {statistics.median(lat[target]):.1f} ms "
            f"| {q[98]:.1f} ms |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
