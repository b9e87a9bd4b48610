"""The team store on PostgreSQL (issue 38, item 5), against a real server the tests start
(tests/store/pgserver.py): the same generated records delivered into the local store
and into PostgreSQL give the same answers (search, list, show) for a fixed set of
queries and filters, both equal to the brute-force scan; records of two installs with
different identities, recorded live through the real hook and dispatcher, are searched
together and told apart by user; what the URL and the credentials may be."""

from __future__ import annotations

import json
import os
import random
import time

import pytest

from ways_sensors.store import pgquery, postgres, query
from ways_sensors.store.pgquery import Team
from ways_sensors.store.sqlite import connect
from ways_sensors.targets import Context, Item
from ways_sensors.targets import store as target

from ..conftest import Install, kill_dispatchers
from .oracle import corpus as generated
from .oracle import matches, random_filters, random_query
from .play import play

QUERIES = [  # (query, filters): substrings of every length, both cases, and filters
    ("git push", {}),
    ("GIT PUSH ORIGIN", {"agent": "codex"}),
    ("café", {}),
    ("CAFÉ", {"user": "alice"}),
    ("ñandú", {"section": "tool_result"}),
    ("%", {}),
    ("50% done", {"user": "bob"}),
    ("under_score", {}),
    ("a\\b", {}),
    ('say "hi"', {"tool": "Bash"}),
    ("x", {}),
    ("ok", {"user": "alice", "tool_kind": "mcp"}),
    ("É", {}),
    ("rm -rf", {"since": "2025-12-01", "until": "2025-12-10"}),
    ("tests/store", {"project": "/p/b", "outcome": "success"}),
    ("\t", {}),
    ("extra-only", {}),
    ("no such text anywhere", {}),
]


def deliver(spec: target.StoreTarget, batch: list[dict]) -> None:
    items = [Item(r, json.dumps(r).encode()) for r in batch]
    out = target.deliver(spec, items, Context("store", "all"), time.monotonic() + 60)
    assert out.accepted, out


@pytest.fixture(scope="module")
def stores(pg, tmp_path_factory):
    """The generated corpus in a local store and in a team store, batch by batch; the
    team store's first batch delivered twice (at least once: stored once)."""
    path = tmp_path_factory.mktemp("local") / "s.db"
    local = target.StoreTarget(path=str(path))
    url = pg.url(pg.database())
    team = target.StoreTarget(url=url)
    recs: list[dict] = []
    for n, batch in enumerate(generated()):
        deliver(local, batch)
        deliver(team, batch)
        if n == 0:
            deliver(team, batch)
        recs += batch
    target.close()
    lite = query.Local(connect(str(path), create=False))
    remote = Team(postgres.connect(postgres.params(url), create=False))
    yield lite, remote, recs
    remote.close()
    lite.close()


def keys(hits: list[dict]) -> set[tuple[str, int]]:
    return {(h["session_id"], h["seq"]) for h in hits}


def test_the_team_store_answers_what_the_local_store_and_the_scan_answer(stores):
    lite, remote, recs = stores
    rng = random.Random(5)
    cases = [(q, query.Filters(**f)) for q, f in QUERIES]
    for _ in range(150):
        q = random_query(rng, recs)
        if q.strip("\n"):
            cases.append((q, random_filters(rng, recs) if rng.random() < 0.6 else query.Filters()))
    found = 0
    for q, f in cases:
        want = {(r["session_id"], r["seq"]) for r in recs if matches(r, q, f)}
        local, team = lite.search(q, f), remote.search(q, f)
        assert keys(team) == keys(local) == want, (q, f)
        by_key = {(h["session_id"], h["seq"]): h for h in local}
        for h in team:  # the same snippet and highlights, the ids aside
            mine = by_key[(h["session_id"], h["seq"])]
            assert {**h, "id": 0} == {**mine, "id": 0}, q
        found += bool(want)
        limited = remote.search(q, f, 7)  # a limit: the newest of the same set
        assert len(limited) == min(7, len(want)) and keys(limited) <= want
    assert found > 120


def test_the_trigram_index_plan_answers_the_same(stores, monkeypatch):
    """PostgreSQL's own plan cut at once (no budget): every query of three characters or
    more through the pg_trgm index, rows sorted after: the same records."""
    lite, remote, recs = stores
    monkeypatch.setattr(pgquery, "BUDGET_MS", 0)
    for q, f in QUERIES:
        f = query.Filters(**f)
        want = {(r["session_id"], r["seq"]) for r in recs if matches(r, q, f)}
        assert keys(remote.search(q, f)) == keys(lite.search(q, f)) == want, q
        newest = remote.search(q, f, 5)
        assert [h["id"] for h in newest] == sorted((h["id"] for h in newest), reverse=True)
        assert keys(newest) <= want and len(newest) == min(5, len(want))


def test_list_and_show_are_the_same_on_both(stores):
    lite, remote, _ = stores
    assert remote.sessions(query.Filters()) == lite.sessions(query.Filters())
    assert len(lite.sessions(query.Filters())) == 80
    for f in (
        query.Filters(user="alice"),
        query.Filters(agent="gemini", section="tool_call"),
        query.Filters(since="2025-12-05", until="2025-12-12"),
        query.Filters(tool="Bash", outcome="exit"),
    ):
        got = remote.sessions(f)
        assert got == lite.sessions(f) and got, f
    users = {s["user_id"] for s in remote.sessions(query.Filters(user="bob"))}
    assert users == {"bob"}
    for sid in ("s000", "s041", "s079"):
        assert remote.session(sid) == lite.session(sid)
        assert remote.records(sid) == lite.records(sid)
        assert len(remote.records(sid)) == 40  # the batch delivered twice is stored once


def test_two_installs_searched_together_and_told_apart_by_user(pg, tmp_path):
    """Two installs (their own state roots, so their own install ids) with different
    `ways.identity`, each a store rule to the same team store, each recording a session
    through the real hook and dispatcher; `ways sessions search --store URL`."""
    url = pg.url(pg.database())
    installs = {}
    for user, agent in (("alice", "claude-code"), ("bob", "codex")):
        inst = Install(tmp_path / user)
        inst.config(f"ways:\n  identity:\n    id: {user}\n    team: platform\n")
        inst.sensor(
            "team",
            f"""\
            rules:
              all:
                sections: [user_prompt, assistant_response, tool_call, tool_result]
                dispatch: {{store: {{url: "{url}"}}}}
                delivery: at_least_once
            """,
        )
        installs[user] = (inst, play(inst, agent))
    try:
        alice, bob = installs["alice"][0], installs["bob"][0]

        def search(*opts: str) -> list[dict]:
            r = alice.ways(
                "sessions", "search", "e", "--store", url, "--json", "--limit", "0", *opts
            )
            assert r.returncode in (0, 1), r.stderr
            return json.loads(r.stdout)

        both = {h["session_id"] for h in search()}
        assert both == {installs["alice"][1], installs["bob"][1]}
        assert {h["session_id"] for h in search("--user", "alice")} == {installs["alice"][1]}
        assert {h["session_id"] for h in search("--user", "bob")} == {installs["bob"][1]}
        assert search("--user", "carol") == []
        r = bob.ways("sessions", "list", "--store", url, "--json", "--user", "bob")
        rows = json.loads(r.stdout)
        assert [(s["session_id"], s["user_id"], s["agent"]) for s in rows] == [
            (installs["bob"][1], "bob", "codex")
        ]
        r = bob.ways("sessions", "show", installs["alice"][1], "--store", url, "--json")
        shown = json.loads(r.stdout)["records"]
        assert shown and {x["identity"]["user"]["id"] for x in shown} == {"alice"}
        installs_ids = {x["identity"]["install_id"] for x in shown}
        bob_ids = {
            x["identity"]["install_id"]
            for x in json.loads(
                alice.ways("sessions", "show", installs["bob"][1], "--store", url, "--json").stdout
            )["records"]
        }
        assert len(installs_ids) == len(bob_ids) == 1 and installs_ids != bob_ids
    finally:
        for user in installs:
            kill_dispatchers(tmp_path / user)


def test_credentials_from_the_environment_or_a_file_never_the_url(pg, tmp_path, monkeypatch):
    db = pg.database()
    pg.sql("CREATE ROLE teammate LOGIN PASSWORD 'swordfish-4F2'")
    pg.sql(f"GRANT ALL ON DATABASE {db} TO teammate")
    pg.sql(f"ALTER DATABASE {db} OWNER TO teammate")
    url = pg.tcp_url(db, "teammate")  # loopback TCP, where the cluster asks a password
    monkeypatch.delenv("PGPASSWORD", raising=False)
    spec = target.StoreTarget(url=url, password_env="TEAM_PG_PASSWORD")
    batch = generated(sessions=1, each=3)[0]
    items = [Item(r, json.dumps(r).encode()) for r in batch]
    monkeypatch.setenv("TEAM_PG_PASSWORD", "wrong")
    out = target.deliver(spec, items, Context("store", "all"), time.monotonic() + 30)
    # refused: retried (the records wait until the password is right), and said in
    # content-free words
    assert (out.status, out.detail) == ("retryable", "OperationalError")
    monkeypatch.setenv("TEAM_PG_PASSWORD", "swordfish-4F2")
    assert target.deliver(spec, items, Context("store", "all"), time.monotonic() + 30).accepted
    secret = tmp_path / "pg.pass"
    secret.write_text("swordfish-4F2\n")
    secret.chmod(0o644)
    with pytest.raises(postgres.StoreError, match="readable by others"):
        postgres.params(url, password_file=str(secret))
    secret.chmod(0o600)
    conn = postgres.connect(postgres.params(url, password_file=str(secret)), create=False)
    assert Team(conn).sessions(query.Filters())[0]["records"] == 3
    conn.close()
    target.close()
    with pytest.raises(postgres.StoreError, match="holds a password"):
        postgres.params(url.replace("teammate@", "teammate:swordfish-4F2@"))
    with pytest.raises(ValueError, match="path or a url"):
        target.StoreTarget(url=url, path="/tmp/x.db")
    # the command reads PGPASSWORD, libpq's own variable
    inst = Install(tmp_path / "reader")
    inst.env["PGPASSWORD"] = "swordfish-4F2"
    r = inst.ways("sessions", "list", "--store", url, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["records"] == 3, r.stderr
    r = inst.ways("sessions", "list", "--store", url.replace("teammate@", "teammate:pw@"))
    assert r.returncode == 3 and "holds a password" in r.stderr and "pw@" not in r.stderr


def test_a_server_off_this_machine_is_reached_over_verified_tls_only():
    os.environ.pop("PGHOST", None)
    got = postgres.params("postgresql://ways@db.corp.example/team")
    assert got["sslmode"] == "verify-full"
    got = postgres.params("postgresql://ways@10.1.2.3/team?sslmode=verify-ca")
    assert got["sslmode"] == "verify-ca"
    for weak in ("disable", "allow", "prefer", "require"):
        with pytest.raises(postgres.StoreError, match="TLS"):
            postgres.params(f"postgresql://ways@db.corp.example/team?sslmode={weak}")
    # loopback and Unix sockets keep the URL's choice
    assert "sslmode" not in postgres.params("postgresql://ways@127.0.0.1/team")
    got = postgres.params("postgresql://ways@localhost/team?sslmode=disable")
    assert got["sslmode"] == "disable"
    assert "sslmode" not in postgres.params("postgresql://ways@/team?host=/run/postgresql")
    tls = {"ca_file": "~/ca.pem", "cert_file": "/c.pem", "key_file": "/k.pem"}
    got = postgres.params("postgresql://ways@db.corp.example/team", tls=tls)
    assert got["sslrootcert"].endswith("/ca.pem") and got["sslkey"] == "/k.pem"
    assert target.off_machine(target.StoreTarget(url="postgresql://ways@db.corp.example/t"))
    assert not target.off_machine(target.StoreTarget(url="postgresql://ways@127.0.0.1/t"))


def test_the_local_store_never_imports_the_driver(install, tmp_path):
    """psycopg is loaded by a postgresql URL alone: a delivery into the local store and
    its search, in a fresh process, leave it out of sys.modules."""
    db = tmp_path / "s.db"
    code = f"""
import json, sys, time
from ways_sensors.targets import Context, Item, store
from ways_sensors.store import query
from ways_sensors.services.sessions import open_reader
rec = {{"section": "user_prompt", "session_id": "s", "seq": 1, "rule_seq": 1,
        "timestamp": "2026-12-06T00:00:00Z", "data": {{"prompt": "hello"}}}}
spec = store.StoreTarget(path={str(db)!r})
out = store.deliver(spec, [Item(rec, json.dumps(rec).encode())], Context("store", "all"),
                    time.monotonic() + 30)
store.close()
assert out.accepted
hits = open_reader({str(db)!r}).search("hello", query.Filters())
print(len(hits), "psycopg" in sys.modules)
"""
    r = install.python(code)
    assert r.stdout.split() == ["1", "False"], r.stderr
    r = install.python(
        code.replace(
            "print(len(hits)", "open_reader('postgresql://u@/d?host=/nonexistent')\nprint(len(hits)"
        )
    )
    assert "cannot be reached" in r.stderr  # the same code with a URL does load it
