"""Issue 40: the held-out corpus through the real dispatcher, and masking's cost, before
and after, in one run.

  corpus      bench/families_corpus.py's secrets and look-alike lines, each the command
              of a spooled PreToolUse, drained by `ways sensors dispatch` (the real
              detached process: build, mask, rule, file target) into a file; a secret
              counts as leaked when a piece of 12 characters or more of its private part
              (the value without its vendor's public prefix) is readable in its record;
              a look-alike counts as altered when its command changed. With --before DIR
              (a copy of the package at another commit), the same spool drained by that
              commit's dispatcher too.
  throughput  mask_record on privacy_bench's large outputs and on 500 hook-shaped
              records (CPU time, median of --runs), this tree against --before DIR, each
              in its own process, interleaved; and the drain of --records spooled
              records (batch_bench's file target), records per second, interleaved.

              The drain is also run by this tree's dispatcher with --before's masking
              put in its place (`hybrid`: the before's redact/ scan, this tree's key
              and personal-data modules), so the drain's ratio is masking's alone and
              not the rest of the dispatcher's changes since --before.
              Each throughput process masks every output once before it measures:
              throughput is the steady state of a dispatcher that masks many records,
              and the one-time costs (imports, compiling the expressions) are measured
              apart, as the first pass's time.

Prints the `## Secrets at fleet scale` section of bench/RESULTS.md.
Usage: python bench/families_bench.py [--before DIR] [--runs R] [--records N]
(DIR: `git archive c5c96c8 ways_sensors | tar -x -C DIR`)
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
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import families_corpus  # noqa: E402
from _measure import fixture_env  # noqa: E402
from batch_bench import WAYS, drain  # noqa: E402
from dispatch_bench import PAYLOAD  # noqa: E402

SID = "bench-families"


def _argv(before: str | None) -> list[str]:
    if before is None:
        return [WAYS, "sensors", "dispatch", "--session", SID]
    code = f"import sys; sys.path.insert(0, {before!r}); from ways_sensors.cli import main; "
    return [
        sys.executable,
        "-c",
        code + "sys.exit(main())",
        "sensors",
        "dispatch",
        "--session",
        SID,
    ]


def through_dispatcher(lines: list[str], before: str | None) -> dict[str, str]:
    """tool_use_id -> the command as the file target received it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = fixture_env(root)
        cfg = root / "config" / "agent-ways"
        (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
        out = root / "out.jsonl"
        (cfg / "sensors" / "corpus.yaml").write_text(
            "rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
            f"    timeout: 30s\n    dispatch: {{file: {{path: '{out}'}}}}\n"
        )
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from ways_sensors.state import spool

        for i, line in enumerate(lines):
            data = {
                **PAYLOAD,
                "session_id": SID,
                "tool_use_id": f"toolu_{i:06d}",
                "tool_input": {"command": line},
            }
            spool.append(
                SID,
                "PreToolUse",
                time.time_ns(),
                env["CLAUDE_PROJECT_DIR"],
                json.dumps(data).encode(),
            )
        proc = subprocess.Popen(
            _argv(before), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            got: dict[str, str] = {}
            t0 = time.monotonic()
            while len(got) < len(lines):
                if time.monotonic() - t0 > 600 or proc.poll() is not None:
                    raise SystemExit(f"the drain stopped at {len(got)} of {len(lines)}")
                time.sleep(0.2)
                if out.exists():
                    for rec in map(json.loads, out.read_text().splitlines()):
                        data = rec.get("data", {})
                        got[data.get("tool_use_id")] = data.get("input", {}).get("command")
            return got
        finally:
            proc.kill()
            proc.wait()


def leaked(private: str, text: str) -> bool:
    if len(private) < 12:
        return private in text
    return any(private[i : i + 12] in text for i in range(len(private) - 11))


def score(before: str | None) -> dict:
    secrets, clean = families_corpus.secrets(), families_corpus.lookalikes()
    lines = [s["text"] for s in secrets] + [c["text"] for c in clean]
    got = through_dispatcher(lines, before)
    missed: Counter[str] = Counter()
    placed: Counter[str] = Counter(s["family"] for s in secrets)
    by_context: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, s in enumerate(secrets):
        miss = leaked(s["private"], got[f"toolu_{i:06d}"] or "")
        missed[s["family"]] += miss
        by_context[s["context"]][0] += miss
        by_context[s["context"]][1] += 1
    altered: Counter[str] = Counter()
    totals: Counter[str] = Counter(c["family"] for c in clean)
    for j, c in enumerate(clean):
        altered[c["family"]] += got[f"toolu_{len(secrets) + j:06d}"] != c["text"]
    return {
        "secrets": len(secrets),
        "families": len({s["family"] for s in secrets}),
        "clean": len(clean),
        "missed": missed,
        "placed": placed,
        "by_context": dict(by_context),
        "altered": altered,
        "clean_by_family": totals,
    }


THROUGHPUT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import privacy_bench  # puts this tree first on the path: the copy goes before it
if sys.argv[2] != "-":
    sys.path.insert(0, sys.argv[2])
from ways_sensors import redact
root = sys.argv[2] if sys.argv[2] != "-" else sys.argv[3]
assert redact.__file__.startswith(root), redact.__file__
import time
t = time.process_time()
privacy_bench.scan_ordinary(1)  # the first pass: imports done, expressions compiled
privacy_bench.scan_small(1)
first = time.process_time() - t
rows = privacy_bench.scan_ordinary(3)
n, us = privacy_bench.scan_small(3)
out = {"ordinary": [[name, rate] for name, _, rate in rows], "small_us": us, "first": first}
print(json.dumps(out))
"""


def hybrid(before: str, into: str) -> str:
    """This tree's package with --before's masking scan in place of its own: redact/'s
    modules from `before`, but this tree's key.py (the key's file handling moved with
    the state room) and personal-data modules (not used without `kinds`)."""
    import shutil

    pkg = Path(into) / "ways_sensors"
    shutil.copytree(HERE.parent / "ways_sensors", pkg, ignore=shutil.ignore_patterns("*.pyc"))
    keep = {"key.py", "pii.py", "pii_tables.py"}
    for f in (pkg / "redact").glob("*.py"):
        if f.name not in keep:
            f.unlink()
    for f in (Path(before) / "ways_sensors" / "redact").glob("*.py"):
        if f.name not in keep:
            shutil.copy(f, pkg / "redact" / f.name)
    return into


def throughput_once(before: str | None) -> dict:
    env = {**os.environ}
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_STATE_HOME"] = tmp
        argv = [sys.executable, "-c", THROUGHPUT, str(HERE), before or "-", str(HERE.parent)]
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    got: dict = json.loads(out.stdout)
    return got


def personal_data() -> None:
    """Precision and recall of the personal-data kinds on tests/pii_corpus.py."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    import pii_corpus

    from ways_sensors import redact
    from ways_sensors.redact import pii

    kinds = frozenset(pii.KINDS)
    tp: Counter[str] = Counter()
    total: Counter[str] = Counter()
    fp = altered = 0
    rows = pii_corpus.corpus()
    for row in rows:
        text = row["text"]
        assert text is not None
        altered += redact.mask_text(text)[0] != text
        spans = [s for s in redact._with_personal(text, redact.find(text), kinds) if s[2] in kinds]
        if row["kind"] is None or row["value"] is None:
            fp += len(spans)
            continue
        start = text.index(row["value"])
        end = start + len(row["value"])
        total[row["kind"]] += 1
        tp[row["kind"]] += any(s <= start and e >= end for s, e, _ in spans)
        fp += sum(1 for s, e, _ in spans if e <= start or s >= end)
    n_tp, n = sum(tp.values()), sum(total.values())
    print(
        f"\nPersonal data (`redact: {{kinds: [email, phone, iban, card, ip]}}`), "
        f"tests/pii_corpus.py: {n} items, {len(rows) - n} negatives; precision "
        f"{100 * n_tp / (n_tp + fp):.1f} % ({fp} false), recall {_pct(n_tp, n)}; per kind: "
        + ", ".join(f"{k} {_pct(tp[k], total[k])}" for k in sorted(total))
        + f"; lines altered without kinds: {altered}."
    )


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f} % ({a}/{b})" if b else "-"


def report(args: argparse.Namespace) -> None:
    print("## Secrets at fleet scale (`bench/families_bench.py`, issue 40)\n")
    print(f"python {sys.version.split()[0]}, 2 shared cores, {time.strftime('%Y-%m-%d %H:%M')}")
    runs = [("this tree", None)] + ([("before", args.before)] if args.before else [])
    scored = {name: score(path) for name, path in runs}
    now = scored["this tree"]
    print(
        f"\nHeld-out corpus through the real dispatcher: {now['secrets']} secrets over "
        f"{now['families']} families in 14 kinds of line, {now['clean']} look-alike lines.\n"
    )
    print("| | recall (no 12-char piece readable) | named | unnamed | look-alikes altered |")
    print("|---|---:|---:|---:|---:|")
    for name, s in scored.items():
        miss = sum(s["missed"].values())
        ctx = s["by_context"]
        print(
            f"| {name} | {_pct(s['secrets'] - miss, s['secrets'])} "
            f"| {_pct(ctx['named'][1] - ctx['named'][0], ctx['named'][1])} "
            f"| {_pct(ctx['unnamed'][1] - ctx['unnamed'][0], ctx['unnamed'][1])} "
            f"| {_pct(sum(s['altered'].values()), s['clean'])} |"
        )
    for name, s in scored.items():
        misses = sorted((f, m) for f, m in s["missed"].items() if m)
        print(f"\nMisses by family, {name} ({len(misses)} families): ", end="")
        print(", ".join(f"{f} {m}/{s['placed'][f]}" for f, m in misses) or "none")
        alts = sorted((f, a) for f, a in s["altered"].items() if a)
        print(f"\nLook-alikes altered, {name}: ", end="")
        print(", ".join(f"{f} {a}/{s['clean_by_family'][f]}" for f, a in alts) or "none")
    personal_data()
    if not args.before:
        return
    samples: dict[str, list[dict]] = {"now": [], "before": []}
    drains: dict[str, list[float]] = {"now": [], "before": [], "hybrid": []}
    with tempfile.TemporaryDirectory() as tmp:
        mixed = hybrid(args.before, tmp)
        for _ in range(args.runs):
            samples["now"].append(throughput_once(None))
            samples["before"].append(throughput_once(args.before))
            drains["now"].append(drain("file", args.records, False, None))
            drains["hybrid"].append(drain("file", args.records, False, None, mixed))
            drains["before"].append(drain("file", args.records, False, None, args.before))
    print(f"\nMasking throughput, this tree against before, interleaved, median of {args.runs}:\n")
    print("| output | before | this tree | before / this tree (time) |\n|---|---:|---:|---:|")
    names = [n for n, _ in samples["now"][0]["ordinary"]]
    for k, name in enumerate(names):
        a = statistics.median(s["ordinary"][k][1] for s in samples["before"])
        b = statistics.median(s["ordinary"][k][1] for s in samples["now"])
        print(f"| {name} | {a:.1f} MB/s | {b:.1f} MB/s | {a / b:.2f} |")
    a = statistics.median(s["small_us"] for s in samples["before"])
    b = statistics.median(s["small_us"] for s in samples["now"])
    print(f"| 6,500 hook-shaped strings | {a:.2f} us each | {b:.2f} us each | {b / a:.2f} |")
    a, b = statistics.median(drains["hybrid"]), statistics.median(drains["now"])
    print(
        f"| drain of {args.records} records (file target), this dispatcher with before's "
        f"masking | {a:.0f} rec/s | {b:.0f} rec/s | {a / b:.2f} |"
    )
    a = statistics.median(drains["before"])
    print(
        f"| drain of {args.records} records (file target), before's whole dispatcher "
        f"| {a:.0f} rec/s | {b:.0f} rec/s | {a / b:.2f} |"
    )
    a = statistics.median(s["first"] for s in samples["before"])
    b = statistics.median(s["first"] for s in samples["now"])
    print(
        f"| first pass over all of the above (imports, compiling) | {a * 1000:.0f} ms "
        f"| {b * 1000:.0f} ms | {b / a:.2f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--records", type=int, default=5000)
    report(parser.parse_args())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
