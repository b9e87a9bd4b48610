"""Redaction throughput on large tool outputs, and `verify` on a 100,000-record file.

  scan       MB/s of mask_record over realistic large outputs (build logs, test runs,
             JSON listings, minified code), clean and with a few secrets sprinkled in
  corpus     recall and clean-line alteration on tests/corpus
  verify     seconds for `ways sensors verify` on 100,000 chained records
Usage: python bench/privacy_bench.py
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
R = random.Random(7)


def outputs() -> dict[str, str]:
    words = [
        "build",
        "ok",
        "test",
        "passed",
        "warning",
        "deprecated",
        "token",
        "limit",
        "key",
        "value",
        "session",
        "password",
        "reset",
        "flow",
        "handler",
        "request",
        "response",
        "module",
        "import",
        "error",
    ]
    log = "\n".join(
        f"2026-11-29T11:{i % 60:02d}:00Z INFO {' '.join(R.choices(words, k=12))} "
        f"id={R.getrandbits(64):x}"
        for i in range(40_000)
    )
    tests = "\n".join(
        f"tests/test_{i}.py::test_case_{i} PASSED [{i % 100:3d}%]" for i in range(60_000)
    )
    listing = json.dumps(
        [
            {
                "id": R.getrandbits(128),
                "name": f"item-{i}",
                "sha": f"{R.getrandbits(160):040x}",
                "tags": R.choices(words, k=4),
            }
            for i in range(20_000)
        ]
    )
    code = "".join(f"function f{i}(a,b){{return a.key+b.token+{i}}};" for i in range(60_000))
    secret = (
        "\nexport GITHUB_TOKEN=ghp_"
        + "Zq4vB7nK2mXc9LpQ1rSt5UwYaD3eF6gH8jKl"
        + "\nDB_PASSWORD=hunter22\n"
    )
    with_secrets = log[: len(log) // 2] + secret + log[len(log) // 2 :]
    return {
        "build log": log,
        "test run": tests,
        "JSON listing": listing,
        "minified code": code,
        "log with 2 secrets": with_secrets,
    }


def scan() -> list[tuple[str, float, float]]:
    sys.path.insert(0, str(REPO))
    from ways_sensors import redact

    rows = []
    for name, text in outputs().items():
        rec = {"section": "tool_result", "data": {"output": {"stdout": text}}}
        times = []
        for _ in range(5):
            t = time.perf_counter()
            redact.mask_record(rec)
            times.append(time.perf_counter() - t)
        mb = len(text.encode()) / 2**20
        rows.append((name, mb, mb / statistics.median(times)))
    return rows


def corpus() -> tuple[int, int, float, int, float]:
    from ways_sensors import redact

    secrets = [
        json.loads(x) for x in (REPO / "tests/corpus/secrets.jsonl").read_text().splitlines()
    ]
    clean = [
        json.loads(x)["text"] for x in (REPO / "tests/corpus/clean.jsonl").read_text().splitlines()
    ]
    missed = sum(r["secret"] in redact.mask_text(r["text"])[0] for r in secrets)
    altered = sum(redact.mask_text(c)[0] != c for c in clean)
    kinds = len({r["kind"] for r in secrets})
    return len(secrets), kinds, 1 - missed / len(secrets), len(clean), altered / len(clean)


def verify_100k() -> float:
    from ways_sensors import chain

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        prev = chain.GENESIS
        with open(path, "w") as f:
            for i in range(1, 100_001):
                rec = {
                    "schema": "ways.sensor.record/1",
                    "section": "tool_call",
                    "seq": i,
                    "session_id": "s",
                    "agent_id": None,
                    "agent_type": "main",
                    "timestamp": "2026-11-29T11:40:02.123Z",
                    "project": "/p",
                    "hook_event": "PreToolUse",
                    "data": {"tool_name": "Bash", "input": {"command": f"echo {i}"}},
                    "sensor": "audit",
                    "rule": "all",
                    "rule_seq": i,
                }
                prev = chain.seal(rec, prev)
                f.write(json.dumps(rec) + "\n")
        ways = str(Path(sys.executable).parent / "ways")
        t = time.perf_counter()
        r = subprocess.run([ways, "sensors", "verify", str(path)], capture_output=True)
        took = time.perf_counter() - t
        assert r.returncode == 0, r.stdout
        return took


def main() -> int:
    rows = scan()
    n, kinds, recall, n_clean, fpr = corpus()
    took = verify_100k()
    print(f"privacy, python {sys.version.split()[0]}")
    print()
    print("| output | size | scan throughput (median of 5) |")
    print("|---|---:|---:|")
    for name, mb, rate in rows:
        print(f"| {name} | {mb:.1f} MB | {rate:.0f} MB/s |")
    print()
    print(
        f"- corpus: {n} secrets over {kinds} kinds, recall {recall:.1%} (goal >= 97 %); "
        f"{n_clean} clean lines, {fpr:.1%} altered (goal <= 3 %)"
    )
    print(f"- `ways sensors verify` on 100,000 chained records: {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
