"""`ways sessions search` and `list` against a brute-force scan of the same records, on a
generated corpus: the same set of records for every query and filter (store/query.py's
docstring is the contract: the query a substring of the record's text, letters
case-insensitive; every filter given holds; schema.py's: the text is the distinct
strings of `data` but a few bookkeeping fields, one a line)."""

from __future__ import annotations

import json
import random
import time

import pytest

from ways_sensors.store import candidates, query
from ways_sensors.store.sqlite import connect
from ways_sensors.targets import Context, Item
from ways_sensors.targets import store as target

from .oracle import corpus as generated
from .oracle import matches, oracle_columns, random_filters, random_query, text


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("oracle") / "s.db"
    spec = target.StoreTarget(path=str(path))
    recs: list[dict] = []
    for batch in generated():
        items = [Item(r, json.dumps(r).encode()) for r in batch]
        out = target.deliver(spec, items, Context("store", "all"), time.monotonic() + 30)
        assert out.accepted
        recs += batch
    target.close()
    return path, recs


def test_search_equals_a_brute_force_scan(corpus):
    path, recs = corpus
    rng = random.Random(8)
    conn = connect(str(path), create=False)
    checked = hits = 0
    for _ in range(300):
        q = random_query(rng, recs)
        if not q.strip("\n"):
            continue
        f = random_filters(rng, recs) if rng.random() < 0.6 else query.Filters()
        got = {(h["session_id"], h["seq"]) for h in query.search(conn, q, f)}
        want = {(r["session_id"], r["seq"]) for r in recs if matches(r, q, f)}
        assert got == want, (q, f)
        checked += 1
        hits += bool(want)
    for q in ("no such text anywhere", "zz", "q", "extra-only"):
        assert query.search(conn, q, query.Filters()) == []
    assert checked > 250 and hits > 150  # the queries found things, not only nothing


def test_list_equals_a_scan_of_the_sessions(corpus):
    path, recs = corpus
    conn = connect(str(path), create=False)
    rng = random.Random(9)
    for _ in range(60):
        pick = rng.choice(recs)
        cols = oracle_columns(pick)
        chance = {"agent": 0.5, "project": 0.5, "section": 0.3, "tool": 0.3}
        f = query.Filters(**{k: cols[k] for k, p in chance.items() if rng.random() < p})
        want: dict[str, str] = {}
        for r in recs:
            c = oracle_columns(r)
            ok = all(getattr(f, k) in (None, c[k]) for k in ("agent", "project"))
            if ok:
                want[r["session_id"]] = max(want.get(r["session_id"], ""), r["timestamp"])
        sessions_with = {
            r["session_id"]
            for r in recs
            if f.section in (None, r["section"]) and f.tool in (None, r["data"].get("tool_name"))
        }
        order = sorted(
            (s for s in want if s in sessions_with), key=lambda s: (want[s], s), reverse=True
        )
        got = [s["session_id"] for s in query.sessions(conn, f)]
        assert sorted(got) == sorted(order)
        assert [want[s] for s in got] == sorted((want[s] for s in got), reverse=True)


def test_the_command_answers_what_the_scan_finds(corpus, install):
    """`ways sessions search --json` as a real process, filters as its options."""
    path, recs = corpus
    cases = [
        ("git push", []),
        ("CAFÉ", ["--agent", "codex"]),
        ("%", []),
        ('"hi"', ["--section", "tool_call", "--tool", "Bash"]),
        ("rm -rf", ["--since", "2025-12-01", "--until", "2025-12-10"]),
        ("x", ["--tool-kind", "mcp", "--outcome", "failure"]),
    ]
    for q, opts in cases:
        args = ("sessions", "search", q, "--json", "--limit", "0", "--store", str(path))
        r = install.ways(*args, *opts)
        pairs = zip(opts[::2], opts[1::2], strict=True)
        f = query.Filters(**{o[2:].replace("-", "_"): v for o, v in pairs})
        want = {(x["session_id"], x["seq"]) for x in recs if matches(x, q, f)}
        assert r.returncode == (0 if want else 1), (q, r.stderr)
        got = {(h["session_id"], h["seq"]) for h in json.loads(r.stdout)}
        assert got == want, q
        for h in json.loads(r.stdout):
            for a, b in h["highlights"]:
                assert h["snippet"][a:b].lower() == q.lower()


def test_short_queries_through_the_index_equal_the_scan(corpus, monkeypatch):
    """A query of one or two ASCII characters, its walk of the newest records cut at
    once (a budget of nothing), is answered through the trigrams it begins: the same
    records as the scan, those holding it only at a text's end and texts of one or two
    characters among them (the index holds each text with schema.PAD after it)."""
    path, recs = corpus
    monkeypatch.setattr(candidates, "BUDGET", 0.0)
    conn = connect(str(path), create=False)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    rng = random.Random(11)
    texts = [text(r["data"]) for r in recs]
    ends = {t[-2:] for t in texts if t} | {t[-1:] for t in texts if t}
    assert {"x", "ok"} <= {t for t in texts}  # whole texts of one and two characters
    queries = [*sorted(q for q in ends if q.isascii()), "x", "OK", "%", '"', "\t", "é!", "zz"]
    queries += [t[i : i + n] for t in rng.sample(texts, 40) for n in (1, 2) for i in (0, 5)]
    checked = 0
    for q in dict.fromkeys(queries):
        if not q or not q.isascii():
            continue
        for f in (query.Filters(), random_filters(rng, recs)):
            got = {(h["session_id"], h["seq"]) for h in query.search(conn, q, f)}
            want = {(r["session_id"], r["seq"]) for r in recs if matches(r, q, f)}
            assert got == want, (q, f)
            checked += 1
    assert checked > 100
    assert any("records_vocab" in s for s in seen)  # the index's plan answered them
