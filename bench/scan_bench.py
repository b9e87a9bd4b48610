"""The hook's payload scan and the dispatcher's payload parse, in process (issue 12).

`hook.string_field` reads the routing fields from the raw bytes (top-level keys only);
`records.parse_payload` is json with a repeated-key check on the top-level object.
Measured per call, the best of 5 repeats: on every recorded payload of the fixtures,
and on hostile shapes where the key is absent or sits behind many strings or escaped
quotes (the scan gives up after hook.SCAN_STEPS quotes). Whole-hook latency is
bench/hook_latency.py's; this isolates the part that changed, which process start-up
noise on a shared machine hides.
Usage: python bench/scan_bench.py
"""

from __future__ import annotations

import json
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ways_sensors import records  # noqa: E402
from ways_sensors.hook import string_field  # noqa: E402

PAYLOADS = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/*.json"))


def per_call_us(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> int:
    fields = (b"hook_event_name", b"session_id", b"transcript_path")
    raw = [p.read_bytes() for p in PAYLOADS]
    times = [per_call_us(lambda d=d, k=k: string_field(d, k), 2000) for d in raw for k in fields]
    print(f"string_field on {len(PAYLOADS)} recorded payloads x {len(fields)} fields:")
    print(f"  median {statistics.median(times):.2f} us, max {max(times):.2f} us per field")
    hostile = {
        "key absent, 1.4 MB of 200k short strings": json.dumps({"a": ["x"] * 200_000}),
        "key absent, 1 MB of escaped quotes": json.dumps({"a": '"' * 500_000}),
        "key after 300k short strings": '{"a":%s,"hook_event_name":"Stop"}'
        % json.dumps(["x"] * 300_000),
        "key after 1M escaped quotes": '{"a":%s,"hook_event_name":"Stop"}'
        % json.dumps('"' * 1_000_000),
    }
    for name, text in hostile.items():
        data = text.encode()
        ms = per_call_us(lambda d=data: string_field(d, b"hook_event_name"), 3) / 1000
        print(f"  {name}: {ms:.1f} ms -> {string_field(data, b'hook_event_name')!r}")
    post = next(p for p in PAYLOADS if p.name == "PostToolUse.json").read_bytes()
    many = json.dumps({"tool_response": [{"a": i} for i in range(100_000)]}).encode()
    print("parse_payload vs plain json.loads:")
    for name, data, n in (("PostToolUse fixture", post, 2000), ("100k small objects", many, 3)):
        ours = per_call_us(lambda d=data: records.parse_payload(d), n)
        plain = per_call_us(lambda d=data: json.loads(d), n)
        print(f"  {name}: {ours:.1f} us vs {plain:.1f} us ({ours / plain:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
