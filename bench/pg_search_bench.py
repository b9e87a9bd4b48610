"""Search latency on the team store (PostgreSQL, pg_trgm) beside the local store (SQLite,
FTS5 trigram), on the same generated records (issue 38, item 5).

Starts Debian's PostgreSQL as the tests do (tests/store/pgserver.py: initdb in a
temporary folder, a private socket), writes N records of bench/search_bench.py's corpus
through each store's own writer in batches of 5,000 (the build times are printed, not
the measure), ANALYZEs, then times search_bench's fixed queries R times each in this
process (50 results), medians, and checks that both stores give the same records
for every query without a limit.

Usage: python bench/pg_search_bench.py [--records N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.search_bench import AGENTS, QUERIES, record
from tests.store.pgserver import Server


def batches(records: int):
    rng = random.Random(38)
    per, batch = 500, []
    for s in range(records // per):
        sid, agent, day = f"session-{s:05d}", AGENTS[s % 5], 1 + s % 28
        for n in range(1, per + 1):
            rec = record(rng, sid, agent, n, day)
            batch.append((rec, json.dumps(rec)))
            if len(batch) == 5000:
                yield batch
                batch = []
    if batch:
        yield batch


def timed(search, q: str, f, runs: int) -> tuple[float, int]:
    times, hits = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        hits = len(search(q, f, 50))
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), hits


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    from ways_sensors.store import postgres, query, sqlite
    from ways_sensors.store.pgquery import Team

    server = Server().start()
    try:
        url = server.url(server.database())
        folder = tempfile.mkdtemp()
        lite_path = os.path.join(folder, "sessions.db")
        lite_conn = sqlite.connect(lite_path, 60)
        pg_conn = postgres.connect(postgres.params(url), 60)
        took = {"sqlite": 0.0, "postgres": 0.0}
        for batch in batches(args.records):
            t = time.perf_counter()
            sqlite.write(lite_conn, batch, 60)
            took["sqlite"] += time.perf_counter() - t
            t = time.perf_counter()
            postgres.write(pg_conn, batch, 600)
            took["postgres"] += time.perf_counter() - t
        pg_conn.execute("ANALYZE")
        for name, s in took.items():
            print(f"built {args.records:,} records into {name} in {s:.0f} s")
        local, team = query.Local(lite_conn), Team(pg_conn)
        print(f"{args.runs} runs a query, 50 results: sqlite ms, postgres ms, hits")
        for label, q, filters in QUERIES:
            f = query.Filters(**filters)
            a, hits = timed(local.search, q, f, args.runs)
            b, hits_pg = timed(team.search, q, f, args.runs)
            same = {(h["session_id"], h["seq"]) for h in local.search(q, f)} == {
                (h["session_id"], h["seq"]) for h in team.search(q, f)
            }
            print(
                f"  {label:<34} {a:8.1f} {b:8.1f}  {hits}/{hits_pg}  "
                + ("same records" if same else "DIFFERENT RECORDS")
            )
        pg_conn.close()
        lite_conn.close()
        shutil.rmtree(folder)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
