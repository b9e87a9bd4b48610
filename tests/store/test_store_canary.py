"""Never a leak (issue 38): secrets planted in every field of every agent's events (and
their session files) reach the store masked, and the store's database, its WAL and
shared-memory files, the HTML replay and the answers of `ways sessions` hold none of
them, while the masks (`[REDACTED:<kind>:...]`) are there and are found by search; nor
do the team store's PostgreSQL tables (every row of every table, read back as text),
nor the server's files (tables, indexes, WAL), nor its answers."""

from __future__ import annotations

import json

import pytest

from ways_sensors.store.sqlite import connect

from ..planting import planted
from .play import AGENTS, PLANT, SECRETS, leaks, play

TABLES = ("records", "sessions", "checkpoints", "meta")


@pytest.mark.parametrize("agent", AGENTS)
def test_no_planted_secret_in_the_store_its_wal_the_page_or_the_answers(
    install, tmp_path, agent, pg
):
    assert install.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
    db = pg.database()
    url = pg.url(db)
    install.sensor(  # the same records into the team store, the rule chained (checkpoints)
        "team",
        f"""\
        rules:
          all:
            sections: [user_prompt, queued_message, assistant_response, tool_call, tool_result,
                       subagent, compaction, session_start, session_end, permission,
                       notification, error]
            dispatch: {{store: {{url: "{url}"}}}}
            chain: true
        """,
    )
    folder = install.home / ".local" / "share" / "agent-ways" / "store"
    # a connection held open across the session keeps the WAL (the last one to close
    # folds it into the database and removes it), so what it held is read below
    held = connect(str(folder / "sessions.db"))
    sid = play(install, agent, lambda value: planted(value, PLANT))
    page = tmp_path / "page.html"
    answers = [
        install.ways("sessions", "list", "--json"),
        install.ways("sessions", "show", sid, "--json"),
        install.ways("sessions", "show", sid),
        install.ways("sessions", "search", "REDACTED", "--json", "--limit", "0"),
        install.ways("sessions", "search", "REDACTED", "--limit", "0"),
        install.ways("sessions", "replay", sid, "--html", str(page)),
    ]
    assert [a.returncode for a in answers] == [0] * len(answers), answers[-1].stderr
    for secret in SECRETS.values():  # a secret is not found: it is not there
        for q in (secret, secret[-20:], secret[4:12]):
            r = install.ways("sessions", "search", q, "--json", "--limit", "0")
            assert (r.returncode, json.loads(r.stdout)) == (1, []), (agent, q)

    files = sorted(folder.iterdir())
    assert {f.name for f in files} >= {"sessions.db", "sessions.db-wal", "sessions.db-shm"}
    assert (folder / "sessions.db-wal").stat().st_size > 0
    everything = b"".join(f.read_bytes() for f in files) + page.read_bytes()
    held.close()
    everything += (folder / "sessions.db").read_bytes()  # and once the WAL is folded in
    everything += b"".join((a.stdout + a.stderr).encode() for a in answers)
    assert leaks(everything) == [], agent
    team = [
        install.ways("sessions", "list", "--store", url, "--json"),
        install.ways("sessions", "show", sid, "--store", url, "--json"),
        install.ways("sessions", "search", "REDACTED", "--store", url, "--json", "--limit", "0"),
    ]
    assert [a.returncode for a in team] == [0, 0, 0], team[-1].stderr
    dump = "".join(pg.sql(f"SELECT t::text FROM ways.{t} t", db) for t in TABLES)
    pg.sql("CHECKPOINT")  # the WAL written into the tables files: both are read
    blob = dump.encode() + pg.files() + b"".join(a.stdout.encode() for a in team)
    assert leaks(blob) == [], agent
    assert pg.sql("SELECT count(*) FROM ways.checkpoints", db).strip() != "0"
    for kind in SECRETS:
        assert f"[REDACTED:{kind}:" in dump, (agent, kind)
    # the secrets flowed and were masked: each kind's mask is in the store and the page
    hits = json.loads(answers[3].stdout)
    assert len(hits) >= 3
    for kind in SECRETS:
        assert f"[REDACTED:{kind}:".encode() in everything, (agent, kind)
