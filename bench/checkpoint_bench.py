"""The drain with signed checkpoints on against off (issue 35 item 5: evidence/cadence.py).

  drain       N spooled PreToolUse records, masking on, `at_least_once`, to a file target,
              one dispatcher from its start to the last record at the consumer (batch_
              bench.py's install and records). Four settings of the same rule:
                unchained  `chain: false`: no chain, no tree, no checkpoint
                off        `chain: true`, `ways.evidence.checkpoints: false`: the hash
                           chain alone (checkpoints off; the ratios are to this)
                cadence    `chain: true`, `checkpoint_seconds` at its default (5)
                per batch  `chain: true`, `checkpoint_seconds: 0` (a checkpoint per
                           batch: what every chained rule did before the cadence)
              each with the target's default batch (512) and with `batch: {max_records:
              1}` (each record alone: a quiet session's shape, where a checkpoint per
              batch was a checkpoint per record). RUNS runs of each, interleaved;
              medians, and each setting's ratio to off: records per second, and the
              dispatcher's CPU seconds (user and system, read from /proc before it
              is stopped), which other sessions' load moves less than the wall clock.
              The install's root key and machine-log key are made before the
              dispatcher starts, as on any install after its first chained session
              (once per install); their cost is printed apart.

Usage: python bench/checkpoint_bench.py [--records N] [--single N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import batch_bench as bb

SETTINGS = {  # the rule's chain line, and config.yaml's `ways.evidence` (None: defaults)
    "unchained": ("chain: false", None),
    "off": ("chain: true", "checkpoints: false"),
    "cadence": ("chain: true", None),
    "per batch": ("chain: true", "checkpoint_seconds: 0"),
}


def _cpu(pid: int) -> float:
    """A live process's user and system CPU seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_key() -> float:
    """Seconds to make a fresh install's root key, key tree and machine-log key (once
    per install)."""
    from ways_sensors.evidence import machinelog
    from ways_sensors.evidence.keys import Keyring
    from ways_sensors.state.layout import Layout

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        layout = Layout(tmp + "/state")
        Keyring(layout).ensure()
        machinelog.signer(layout)
        return time.perf_counter() - t


def drain(records: int, single: bool, setting: str) -> tuple[float, int, float]:
    """(records per second from the dispatcher's start to the last record's arrival,
    checkpoint lines the consumer got, the dispatcher's CPU seconds until then)."""
    chain, evidence = SETTINGS[setting]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env, count = bb.install(root, "file", single, None)
        rule = root / "config" / "agent-ways" / "sensors" / "bench.yaml"
        rule.write_text(rule.read_text().replace("chain: true", chain))
        if evidence is not None:
            config = root / "config" / "agent-ways" / "config.yaml"
            config.write_text(config.read_text() + f"  evidence:\n    {evidence}\n")
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.evidence import machinelog
        from ways_sensors.evidence.keys import Keyring
        from ways_sensors.state import spool
        from ways_sensors.state.layout import Layout

        layout = Layout(env["XDG_STATE_HOME"] + "/agent-ways")
        Keyring(layout).ensure()
        machinelog.signer(layout)  # the machine log's key, made once per install too

        sid = "bench-checkpoints"
        for i in range(records):
            spool.append(
                sid, "PreToolUse", time.time_ns(), env["CLAUDE_PROJECT_DIR"], bb.payload(sid, i)
            )
        t0 = time.perf_counter()
        argv = bb.dispatcher_argv(sid, None)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while count() < records:
                if time.perf_counter() - t0 > 900 or proc.poll() is not None:
                    raise SystemExit(f"the drain stopped at {count()} of {records}")
                time.sleep(0.005)
            rate = records / (time.perf_counter() - t0)
            cpu = _cpu(proc.pid)
        finally:
            proc.kill()
            proc.wait()
        text = (root / "out.jsonl").read_bytes()
        return rate, text.count(b'"section":"checkpoint"'), cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000, help="records, default batches")
    ap.add_argument("--single", type=int, default=2_000, help="records, a batch each")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for single, n in ((False, args.records), (True, args.single)):
        rates: dict[str, list[float]] = {s: [] for s in SETTINGS}
        cps: dict[str, list[int]] = {s: [] for s in SETTINGS}
        cpus: dict[str, list[float]] = {s: [] for s in SETTINGS}
        for _ in range(args.runs):
            for s in SETTINGS:
                rate, got, cpu = drain(n, single, s)
                rates[s].append(rate)
                cps[s].append(got)
                cpus[s].append(cpu)
        shape = "max_records: 1" if single else "default batch (512)"
        print(f"\n{n:,} records, {shape}")
        off = statistics.median(rates["off"])
        off_cpu = statistics.median(cpus["off"])
        for s in SETTINGS:
            med, cpu = statistics.median(rates[s]), statistics.median(cpus[s])
            runs = " / ".join(f"{r:,.0f}" for r in rates[s])
            print(
                f"  {s:10s} {med:8,.0f} records/s (runs {runs}), {off and med / off:.2f}x off; "
                f"CPU {cpu:.2f} s, {off_cpu and cpu / off_cpu:.2f}x off's; "
                f"checkpoint lines {statistics.median(cps[s]):,.0f}"
            )
    keys = sorted(first_key() for _ in range(args.runs))
    first = keys[len(keys) // 2] * 1000
    print(f"\nan install's first keys (root, tree, machine log): {first:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
