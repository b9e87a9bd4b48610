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

from ways_sensors.store import query
from ways_sensors.store.sqlite import connect
from ways_sensors.targets import Context, Item
from ways_sensors.targets import store as target

WORDS = (
    "git push origin main --force",
    "pytest -x tests/store",
    "rm -rf build/",
    "café",
    "naïve Ünïcode",
    "SELECT * FROM users;",
    "/home/dev/project/src/app.py",
    "50% done",
    "under_score",
    'say "hi"',
    "a\\b",
    "TODO: fix",
    "deploy.sh --prod",
    "npm install",
    "Traceback (most recent call last)",
    "ok",
    "x",
    "ÉCOLE",
    "tab\there",
    "ñandú",
)
AGENTS = ("claude-code", "codex", "gemini", "cursor", "copilot")
SECTIONS = ("user_prompt", "assistant_response", "tool_call", "tool_result", "session_end")
TOOLS = (("Bash", "shell"), ("Read", "read"), ("Edit", "edit"), ("mcp__x__y", "mcp"))
PROJECTS = ("/p/a", "/p/b", "/p/c")


def strings(value) -> list[str]:
    """The oracle's own walk: every non-empty string, depth first."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def text(data: dict) -> str:
    """The oracle's record text: distinct strings outside `extra`, the call's id and the
    tool's name and kind, first seen first."""
    seen: list[str] = []
    skip = ("extra", "tool_use_id", "tool_name", "tool_kind")
    for s in strings({k: v for k, v in data.items() if k not in skip}):
        if s not in seen:
            seen.append(s)
    return "\n".join(seen)


def phrase(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def record(rng: random.Random, sid: str, agent: str, project: str, n: int, t0: float) -> dict:
    section = rng.choice(SECTIONS)
    tool, kind = rng.choice(TOOLS)
    data: dict = {}
    if section == "user_prompt":
        data = {"prompt": phrase(rng), "origin": "human"}
    elif section == "assistant_response":
        data = {"text": phrase(rng), "model": rng.choice(("m-1", "m-2"))}
    elif section == "tool_call":
        data = {"tool_name": tool, "tool_kind": kind, "input": {"command": phrase(rng)}}
    elif section == "tool_result":
        status = rng.choice(("success", "failure"))
        data = {"tool_name": tool, "tool_kind": kind, "status": status}
        data["output" if status == "success" else "error"] = [phrase(rng), {"k": phrase(rng)}]
    else:
        data = {"reason": rng.choice(("exit", "other"))}
    if rng.random() < 0.5:  # the client's bookkeeping: never searched
        data["extra"] = {"cwd": "/home/dev/extra-only", "note": phrase(rng)}
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + n * 7)) + ".000Z"
    return {
        "section": section,
        "seq": n,
        "session_id": sid,
        "agent": agent,
        "agent_id": None,
        "timestamp": ts,
        "project": project,
        "data": data,
        "sensor": "store",
        "rule": "all",
        "rule_seq": n,
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(38)
    path = tmp_path_factory.mktemp("oracle") / "s.db"
    spec = target.StoreTarget(path=str(path))
    recs: list[dict] = []
    t0 = 1_764_000_000.0
    for i in range(80):
        sid, agent, project = f"s{i:03d}", rng.choice(AGENTS), rng.choice(PROJECTS)
        start = t0 + rng.randint(0, 86400 * 20)
        batch = [record(rng, sid, agent, project, n, start) for n in range(1, 41)]
        items = [Item(r, json.dumps(r).encode()) for r in batch]
        out = target.deliver(spec, items, Context("store", "all"), time.monotonic() + 30)
        assert out.accepted
        recs += batch
    target.close()
    return path, recs


def oracle_columns(r: dict) -> dict:
    d = r["data"]
    outcome = {"tool_result": d.get("status"), "session_end": d.get("reason")}.get(r["section"])
    return {
        "agent": r["agent"],
        "section": r["section"],
        "tool": d.get("tool_name"),
        "tool_kind": d.get("tool_kind"),
        "project": r["project"],
        "session": r["session_id"],
        "model": d.get("model"),
        "outcome": outcome,
    }


def matches(r: dict, q: str, f: query.Filters) -> bool:
    whole = text(r["data"])
    if q.isascii():  # A-Z folded alone, as SQLite's lower() does for an ASCII query
        whole = "".join(c.lower() if "A" <= c <= "Z" else c for c in whole)
    else:
        whole = whole.lower()
    if q.lower() not in whole:
        return False
    cols = oracle_columns(r)
    for name, value in cols.items():
        wanted = getattr(f, name)
        if wanted is not None and value != wanted:
            return False
    if f.since is not None and r["timestamp"] < f.since:
        return False
    return not (f.until is not None and r["timestamp"][: len(f.until)] > f.until)


def random_filters(rng: random.Random, recs: list[dict]) -> query.Filters:
    pick = rng.choice(recs)
    cols = oracle_columns(pick)
    chosen = {k: cols[k] for k in cols if rng.random() < 0.25 and cols[k] is not None}
    if rng.random() < 0.3:
        chosen["since"] = rng.choice(recs)["timestamp"][: rng.choice((10, 19, 24))]
    if rng.random() < 0.3:
        chosen["until"] = rng.choice(recs)["timestamp"][: rng.choice((10, 19, 24))]
    return query.Filters(**chosen)


def random_query(rng: random.Random, recs: list[dict]) -> str:
    whole = text(rng.choice(recs)["data"])
    size = rng.choice((1, 2, 3, 4, 6, 9, 14))
    start = rng.randrange(max(len(whole) - size, 1))
    q = whole[start : start + size]
    return q.upper() if rng.random() < 0.3 else q


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
