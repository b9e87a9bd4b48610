"""Search latency on a large session store (issue 38: under 100 ms per query on a store
of 1,000,000 records).

Builds a store of N generated records (default 1,000,000: 2,000 sessions of 500, five
agents, prompts, commands, file paths and tool output from a fixed vocabulary with
numbered names, about 150 characters of text a record) through the store's own writer
in batches of 5,000, then times a fixed set of substring and filter queries: each R
times in this process (store/query.py's search, 50 results, as `ways sessions search`
asks), medians; and the whole `ways sessions search` command for two of them (a
process's start included).

Usage: python bench/search_bench.py [--records N] [--runs R] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "fix the failing test in",
    "refactor",
    "add logging to",
    "why does",
    "deploy",
    "explain the retry in",
    "rename",
    "remove the dead code in",
    "review",
    "profile",
)
COMMANDS = ("git push origin", "pytest -x", "grep -rn", "rm -rf build/", "npm test --", "make")
AGENTS = ("claude-code", "codex", "gemini", "cursor", "copilot")
RARE_EVERY = 9973  # about one record in this many holds `zq` and `#` (short rare queries)
QUERIES = [  # (label, query, filters)
    ("rare path", "module_4242.py", {}),
    ("common word", "refactor", {}),
    ("command", "git push origin", {}),
    ("two characters, rare", "zq", {}),
    ("two characters, rare, one agent", "zq", {"agent": "codex"}),
    ("two characters, common", "ok", {}),
    ("one character, nowhere", "~", {}),
    ("one character, rare", "#", {}),
    ("one character, rare, other case", "Q", {}),
    ("rare, one agent", "module_777.py", {"agent": "codex"}),
    (
        "common, tool calls since a date",
        "pytest -x",
        {"section": "tool_call", "since": "2026-11-20"},
    ),
    ("no match", "no such text anywhere", {}),
]


def record(rng: random.Random, sid: str, agent: str, n: int, day: int) -> dict:
    module = f"src/pkg_{rng.randrange(100)}/module_{rng.randrange(10_000)}.py"
    kind = rng.randrange(4)
    if kind == 0:
        section, data = "user_prompt", {"prompt": f"{rng.choice(WORDS)} {module} please"}
    elif kind == 1:
        cmd = f"{rng.choice(COMMANDS)} {module}"
        section = "tool_call"
        data = {
            "tool_name": "Bash",
            "tool_kind": "shell",
            "command": cmd,
            "input": {"command": cmd},
        }
    elif kind == 2:
        out = f"{module}:{rng.randrange(900)}: ok\n" * rng.randint(1, 3)
        section = "tool_result"
        data = {"tool_name": "Bash", "tool_kind": "shell", "status": "success", "output": out}
    else:
        section, data = "assistant_response", {"text": f"I changed {module} and ran the tests."}
    if (n * 7919 + len(sid) * 31 + int(sid[-5:])) % RARE_EVERY == 0:  # rng left as it was
        data["note"] = "zq #1"
    return {
        "section": section,
        "seq": n,
        "session_id": sid,
        "agent": agent,
        "timestamp": f"2026-11-{day:02d}T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "project": f"/home/dev/p{rng.randrange(20)}",
        "data": data,
        "sensor": "store",
        "rule": "all",
        "rule_seq": n,
    }


def build(path: str, records: int) -> float:
    from ways_sensors.store import sqlite

    rng = random.Random(38)
    conn = sqlite.connect(path, 60)
    t0 = time.perf_counter()
    per = 500
    batch: list[tuple[dict, str]] = []
    for s in range(records // per):
        sid, agent, day = f"session-{s:05d}", AGENTS[s % 5], 1 + s % 28
        for n in range(1, per + 1):
            rec = record(rng, sid, agent, n, day)
            batch.append((rec, json.dumps(rec)))
            if len(batch) == 5000:
                sqlite.write(conn, batch, 60)
                batch = []
    if batch:
        sqlite.write(conn, batch, 60)
    conn.close()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--keep", metavar="DIR", help="build (or reuse) the store in DIR")
    args = ap.parse_args()
    from ways_sensors.store import query, sqlite

    folder = args.keep or tempfile.mkdtemp()
    path = os.path.join(folder, "sessions.db")
    if not os.path.exists(path):
        took = build(path, args.records)
        each = took / args.records * 1e6
        print(f"built {args.records:,} records in {took:.0f} s ({each:.0f} us a record)")
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    conn = sqlite.connect(path, create=False)
    count = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    print(f"store: {count:,} records, {size / 1e6:,.0f} MB; {args.runs} runs a query, 50 results")
    for label, q, filters in QUERIES:
        times, hits = [], 0
        for _ in range(args.runs):
            t = time.perf_counter()
            hits = len(query.search(conn, q, query.Filters(**filters), 50))
            times.append((time.perf_counter() - t) * 1000)
        print(
            f"  {label:<34} {statistics.median(times):8.1f} ms  (max {max(times):.1f})  {hits} hits"
        )
    ways = str(Path(sys.executable).parent / "ways")
    for q in ("module_4242.py", "git push origin"):
        times = []
        for _ in range(max(args.runs // 2, 3)):
            t = time.perf_counter()
            argv = [ways, "sessions", "search", q, "--store", path, "--json"]
            subprocess.run(argv, capture_output=True, check=False)
            times.append((time.perf_counter() - t) * 1000)
        print(f"  `ways sessions search {q!r}` (whole command)  {statistics.median(times):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
