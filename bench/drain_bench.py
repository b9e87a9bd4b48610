"""The drain against what the same work costs: the dispatcher beside a minimal pipeline.

Per run, on one throwaway install, N spooled PreToolUse records (each its own
tool_use_id and command), one rule: `tool_call`, masking on, `chain: true`,
`at_least_once`, a file target with its default batch (512 records, no wait):

  dispatcher   `ways sensors dispatch` on the spool, from its start to the last record
               in the file (the real process: build loop, journal, the rule's worker,
               its cursor, the file target)
  reference    this process, one thread, the same spool segments: parse each frame and
               its payload, make the record the dispatcher makes of it (the envelope
               with the payload's prompt_id, the tool's name, id, kind, command and
               input, the payload's other fields under data.extra: the Claude Code
               builder's record, its fields spelled inline for the bench's one tool,
               without an adapter), mask it with the same masking, chain it (sha256
               over the canonical JSON), append to a file in fsynced batches of 512
  minimal      the same pipeline on a smaller record: the envelope and the tool's name,
               id and input only (this bench's first reference, until 2026-12-03)

Runs interleaved (dispatcher, reference, minimal, dispatcher, ...); medians of records
per second and the ratios from the same runs. The goal (issue 20 item 12): the
dispatcher within 2x of "a minimal single-threaded Python pipeline doing the same work
on the same records": the reference. The minimal one masked and hashed about half the
text the dispatcher does (masking the dispatcher's record took 27.8 us against 13.0 us,
its canonical JSON 10.0 against 6.5 us: bench/RESULTS.md, 2026-12-03 16:17), so it is
not the same records; its ratio is printed beside, for comparison with the figures
measured against it before. With --profile DIR, one more dispatcher run with every
thread under cProfile (one .prof file per thread in DIR).

Usage: python bench/drain_bench.py [--records N] [--runs R] [--profile DIR]
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
from batch_bench import WAYS, install, payload

SID = "bench-drain"
BATCH = 512
# a payload's fields the same record does not repeat under data.extra (the builder's)
SHOWN = {"session_id", "hook_event_name", "prompt_id", "tool_name", "tool_use_id", "tool_input"}

PROFILE = r"""
import cProfile, marshal, os, signal, sys, threading
out = sys.argv.pop(1)
profiles = []
inner = threading.Thread._bootstrap_inner
def bootstrap(self):
    p = cProfile.Profile()
    profiles.append((self.name, p))
    p.enable()
    try:
        inner(self)
    finally:
        p.disable()
threading.Thread._bootstrap_inner = bootstrap
main_profile = cProfile.Profile()
profiles.append(("main", main_profile))
def dump(*_):
    main_profile.disable()
    for i, (name, p) in enumerate(profiles):
        p.snapshot_stats()
        with open(os.path.join(out, f"{i}-" + name.replace("/", "_") + ".prof"), "wb") as f:
            marshal.dump(p.stats, f)
    os._exit(0)
signal.signal(signal.SIGTERM, dump)
main_profile.enable()
from ways_sensors.cli import main
sys.exit(main())
"""


def spooled(root: Path, records: int) -> tuple[dict[str, str], object]:
    env, count = install(root, "file", False, None)
    os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
    from ways_sensors.state import spool

    for i in range(records):
        spool.append(SID, "PreToolUse", time.time_ns(), env["CLAUDE_PROJECT_DIR"], payload(SID, i))
    return env, count


def dispatcher(records: int, profile: str | None = None) -> float:
    """Records per second of the real dispatcher, from its start to the last record."""
    with tempfile.TemporaryDirectory() as tmp:
        env, count = spooled(Path(tmp), records)
        argv = [WAYS, "sensors", "dispatch", "--session", SID]
        if profile:
            argv = [sys.executable, "-c", PROFILE, profile, *argv[1:]]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
        try:
            while count() < records:  # type: ignore[operator]
                if time.perf_counter() - t0 > 900 or proc.poll() is not None:
                    raise SystemExit(f"the drain stopped at {count()} of {records}")  # type: ignore[operator]
                time.sleep(0.002)
            return records / (time.perf_counter() - t0)
        finally:
            proc.terminate() if profile else proc.kill()
            proc.wait()


def reference(records: int, same_record: bool = True) -> float:
    """Records per second of the single-threaded pipeline on the same spool: with the
    dispatcher's record, or (`same_record=False`) the minimal one (module docstring)."""
    import hashlib
    import json

    from ways_sensors import records as recs
    from ways_sensors import redact
    from ways_sensors.pipeline import chain
    from ways_sensors.pipeline.stages import dumps
    from ways_sensors.state import spool
    from ways_sensors.state.events import iso_utc

    with tempfile.TemporaryDirectory() as tmp:
        env, _ = spooled(Path(tmp), records)
        folder = Path(env["XDG_STATE_HOME"]) / "agent-ways" / "sessions" / SID / "spool"
        out = Path(tmp) / "reference.jsonl"
        t0 = time.perf_counter()
        prev, seq, batch = chain.GENESIS, 0, []
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for name in spool.segment_names(str(folder)):
                data = (folder / name).read_bytes()
                for _, _, body in spool.scan_frames(data):
                    entry = spool.parse_entry(body)
                    assert entry is not None
                    p = json.loads(entry.payload)
                    data = {
                        "tool_name": p.get("tool_name"),
                        "tool_use_id": p.get("tool_use_id"),
                        "input": p.get("tool_input"),
                    }
                    ts = iso_utc(entry.ts_ns)
                    if same_record:
                        data = {
                            "tool_name": data["tool_name"],
                            "tool_use_id": data["tool_use_id"],
                            "tool_kind": "shell",
                            "command": p["tool_input"]["command"],
                            "input": data["input"],
                            "extra": {k: v for k, v in p.items() if k not in SHOWN},
                        }
                        prompt = p.get("prompt_id")
                        draft = recs.Draft("tool_call", entry.event, ts, data, None, "main", prompt)
                    else:
                        draft = recs.Draft("tool_call", entry.event, ts, data)
                    seq += 1
                    rec = recs.envelope(draft, seq, SID, entry.project)
                    rec.update(sensor="bench", rule="calls", rule_seq=seq)
                    rec = redact.mask_record(rec)
                    h = hashlib.sha256(prev.encode() + b"\n" + chain.canonical(rec))
                    rec["chain"] = {"prev": prev, "hash": h.hexdigest()}
                    prev = rec["chain"]["hash"]
                    batch.append(dumps(rec) + b"\n")
                    if len(batch) == BATCH:
                        os.write(fd, b"".join(batch))
                        os.fsync(fd)
                        batch = []
            if batch:
                os.write(fd, b"".join(batch))
                os.fsync(fd)
        finally:
            os.close(fd)
        assert seq == records
        return records / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--profile", metavar="DIR", help="profile one more dispatcher run")
    args = ap.parse_args()
    disp, ref, small = [], [], []
    for _ in range(args.runs):
        disp.append(dispatcher(args.records))
        ref.append(reference(args.records))
        small.append(reference(args.records, same_record=False))
    d, r, m = statistics.median(disp), statistics.median(ref), statistics.median(small)
    print(f"{args.runs} interleaved runs of {args.records:,} records; records/s, median (min..max)")
    print(f"  dispatcher  {d:8,.0f}   ({min(disp):,.0f}..{max(disp):,.0f})")
    print(f"  reference   {r:8,.0f}   ({min(ref):,.0f}..{max(ref):,.0f})   the dispatcher's record")
    print(f"  minimal     {m:8,.0f}   ({min(small):,.0f}..{max(small):,.0f})   the smaller record")
    print(f"reference / dispatcher: {r / d:.2f}x (goal: at most 2x)")
    print(f"minimal / dispatcher: {m / d:.2f}x (not the same records: for comparison)")
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        rate = dispatcher(args.records, args.profile)
        print(f"profiled run: {rate:,.0f} records/s; one .prof per thread in {args.profile}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
