"""Never a leak (issue 38): secrets planted in every field of every agent's events (and
their session files) reach the store masked, and the store's database, its WAL and
shared-memory files, the HTML replay and the answers of `ways sessions` hold none of
them, while the masks (`[REDACTED:<kind>:...]`) are there and are found by search."""

from __future__ import annotations

import json

import pytest

from ways_sensors.store.sqlite import connect

from ..planting import planted
from .play import AGENTS, PLANT, SECRETS, leaks, play


@pytest.mark.parametrize("agent", AGENTS)
def test_no_planted_secret_in_the_store_its_wal_the_page_or_the_answers(install, tmp_path, agent):
    assert install.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
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
    # the secrets flowed and were masked: each kind's mask is in the store and the page
    hits = json.loads(answers[3].stdout)
    assert len(hits) >= 3
    for kind in SECRETS:
        assert f"[REDACTED:{kind}:".encode() in everything, (agent, kind)
