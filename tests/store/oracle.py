"""The search oracle's generated corpus and its brute-force scan, shared by the local
store's test (test_search_oracle.py) and the team store's (test_postgres.py): the
contract is store/query.py's docstring (the query a substring of the record's text,
letters case-insensitive; every filter given holds) and schema.py's (the text is the
distinct strings of `data` but a few bookkeeping fields, one a line)."""

from __future__ import annotations

import random
import time

from ways_sensors.store import query

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
USERS = ("alice", "bob", None)  # identity.user.id; None: a record without identity


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


def record(
    rng: random.Random, sid: str, agent: str, project: str, n: int, t0: float, user=None
) -> dict:
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
    out = {
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
    if user is not None:
        out["identity"] = {"user": {"id": user}, "install_id": user * 4, "host": {"name": "h"}}
    return out


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
        "user": (r.get("identity") or {}).get("user", {}).get("id"),
    }


_FOLDED: dict[int, tuple[dict, str, str]] = {}


def folded(data: dict) -> tuple[str, str]:
    """The record's text with A-Z folded alone (as SQLite's lower() does for an ASCII
    query) and wholly lowered: made once per record, not once per query and record."""
    got = _FOLDED.get(id(data))
    if got is None or got[0] is not data:
        whole = text(data)
        ascii_folded = "".join(c.lower() if "A" <= c <= "Z" else c for c in whole)
        got = _FOLDED[id(data)] = (data, ascii_folded, whole.lower())
    return got[1], got[2]


def matches(r: dict, q: str, f: query.Filters) -> bool:
    ascii_folded, lowered = folded(r["data"])
    if q.lower() not in (ascii_folded if q.isascii() else lowered):
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


def corpus(seed: int = 38, sessions: int = 80, each: int = 40) -> list[list[dict]]:
    """The generated sessions, one batch of records each: five agents, three projects,
    two users' identities and records with none."""
    rng = random.Random(seed)
    t0 = 1_764_000_000.0
    out = []
    for i in range(sessions):
        sid, agent, project = f"s{i:03d}", rng.choice(AGENTS), rng.choice(PROJECTS)
        start, user = t0 + rng.randint(0, 86400 * 20), USERS[i % 3]
        out.append([record(rng, sid, agent, project, n, start, user) for n in range(1, each + 1)])
    return out
