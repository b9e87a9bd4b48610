"""The store through the real hook and dispatcher: the shipped sensor turned on with one
`ways settings set`, every agent's session stored as a file consumer receives it, and
a dispatcher SIGKILLed in its drain storing every record once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3

import pytest

from ..conftest import ALL_SECTIONS
from ..helpers import SID, spool_directly, start_dispatcher, wait_until
from .play import AGENTS, play


def store_path(install):
    return install.home / ".local" / "share" / "agent-ways" / "store" / "sessions.db"


def bash_call(tool_use_id: str, command: str) -> dict:
    """A PreToolUse payload of a Bash call."""
    return {
        "session_id": SID,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": tool_use_id,
        "tool_input": {"command": command},
    }


def by_seq(records: list[dict]) -> dict[int, tuple]:
    return {r["seq"]: (r["section"], r.get("agent"), r["data"]) for r in records}


@pytest.mark.parametrize("agent", AGENTS)
def test_the_shipped_sensor_stores_every_agent_s_session_as_a_file_gets_it(
    install, tmp_path, agent
):
    r = install.ways("settings", "set", "ways.sensors.store.enabled", "true")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "file.jsonl"
    install.sensor(
        "copy",
        "rules:\n  all:\n"
        f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
        "    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    sid = play(install, agent)
    filed = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(filed) >= 5
    shown = install.ways("sessions", "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    got = json.loads(shown.stdout)
    assert by_seq(got["records"]) == by_seq(filed)
    assert {x["rule"] for x in got["records"]} == {"all"}
    assert {x["sensor"] for x in got["records"]} == {"store"}
    head = got["session"]
    assert (head["session_id"], head["agent"], head["records"]) == (sid, agent, len(filed))
    assert head["imported"] == 0
    listed = json.loads(install.ways("sessions", "list", "--json", "--agent", agent).stdout)
    assert [s["session_id"] for s in listed] == [sid]
    assert install.ways("sessions", "list", "--agent", "nobody").returncode == 1


def test_a_dispatcher_killed_mid_drain_stores_every_record_once(install):
    db = install.root / "s.db"
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    install.sensor(
        "st",
        "rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
        "    batch: {max_records: 4}\n"
        f"    dispatch: {{store: {{path: '{db}'}}}}\n",
    )
    n = 1500
    spool_directly(
        install,
        [("PreToolUse", bash_call(f"toolu_{i}", f"echo {i}")) for i in range(n)],
    )

    def stored() -> int:
        try:
            with sqlite3.connect(db) as c:
                return c.execute("SELECT count(*) FROM records").fetchone()[0]
        except sqlite3.Error:
            return 0

    first = start_dispatcher(install)
    assert wait_until(lambda: stored() >= 8, 60)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(10)
    at_kill = stored()
    second = start_dispatcher(install)
    assert wait_until(lambda: stored() >= n, 120), stored()
    second.wait(120)  # drained, then idle: it exits
    with sqlite3.connect(db) as c:
        seqs = [x for (x,) in c.execute("SELECT rule_seq FROM records ORDER BY rule_seq")]
        head = c.execute("SELECT records, tools FROM sessions").fetchall()
    assert seqs == list(range(1, n + 1)), at_kill
    assert head == [(n, n)]


def test_the_retention_sweep_removes_sessions_older_than_store_kept(install):
    """`ways.retention.store_kept`: a dispatcher's retention sweep removes the store's
    sessions whose last record is older; a newer one stays."""
    assert install.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
    old = play(install, "codex")
    db = store_path(install)
    with sqlite3.connect(db) as conn:  # that session, as if it ended a month ago
        conn.execute("UPDATE sessions SET last_ts = '2000-01-01T00:00:00Z' WHERE session_id = ?",
                     (old,))  # fmt: skip
    r = install.ways("settings", "set", "ways.retention.store_kept", "30d")
    assert r.returncode == 0, r.stderr
    new = play(install, "gemini")  # its dispatcher sweeps as it leaves
    listed = lambda: [  # noqa: E731 (read again at each look)
        s["session_id"] for s in json.loads(install.ways("sessions", "list", "--json").stdout)
    ]
    assert wait_until(lambda: listed() == [new]), listed()
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT count(*) FROM records WHERE session_id = ?", (old,)
        ).fetchone() == (0,)


def test_lint_checks_a_store_target_s_folder_and_passes_the_default_one(install, tmp_path):
    (tmp_path / "f").write_text("a file, not a folder")
    install.sensor(
        "st",
        "rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{store: {{path: '{tmp_path / 'f' / 's.db'}'}}}}\n",
    )
    install.ways("settings", "set", "ways.sensors.store.enabled", "true")
    r = install.ways("sensors", "lint", "--check-targets", "--json")
    errors = json.loads(r.stdout)["errors"]
    assert r.returncode == 3
    assert [(e["rule"], "is not a folder" in e["message"]) for e in errors] == [("r", True)]


def test_show_and_replay_say_when_the_store_holds_no_such_session(install, tmp_path):
    from ways_sensors.store import sqlite

    store_path(install).parent.mkdir(parents=True)
    sqlite.connect(str(store_path(install)), create=True).close()  # a store, and no session
    page = tmp_path / "page.html"
    for argv in (("show",), ("show", "--json"), ("replay",), ("replay", "--html", str(page))):
        r = install.ways("sessions", argv[0], "nosuch", *argv[1:])
        assert (r.returncode, r.stdout, r.stderr) == (1, "", "no session nosuch in the store\n")
    assert not page.exists()


V4_TRIGGER = """CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
  INSERT INTO records_fts (rowid, text) VALUES (new.id, new.text || char(10, 10));
END;"""


def test_a_store_of_schema_4_is_upgraded_and_each_new_record_indexed_once(install):
    """A store an earlier ways made (schema 4, indexed by an insert trigger) is upgraded
    by the first dispatcher that writes to it: the trigger goes, the writer indexes each
    new record once, and what the trigger indexed is still found."""
    from ways_sensors.store import schema

    db = install.root / "s.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(schema.DDL + V4_TRIGGER + "INSERT INTO meta VALUES ('schema', '4');")
        old = {
            "sensor": "st",
            "rule": "calls",
            "session_id": "earlier",
            "rule_seq": 1,
            "seq": 1,
            "timestamp": "2026-12-01T10:00:00Z",
            "section": "tool_call",
            "data": {"tool_name": "Bash", "tool_input": {"command": "echo oldneedle"}},
        }
        conn.execute(schema.INSERT, schema.row(old, json.dumps(old)))
    install.sensor(
        "st",
        "rules:\n  calls:\n    sections: [tool_call]\n    delivery: at_least_once\n"
        f"    dispatch: {{store: {{path: '{db}'}}}}\n",
    )
    spool_directly(
        install,
        [("PreToolUse", bash_call("toolu_1", "echo newneedle"))],
    )
    dispatcher = start_dispatcher(install)
    try:

        def found(query: str) -> list[str]:
            r = install.ways("sessions", "search", query, "--store", str(db), "--json")
            return [h["session_id"] for h in json.loads(r.stdout or "[]")]

        assert wait_until(lambda: found("newneedle") == [SID], 60), found("newneedle")
        assert found("oldneedle") == ["earlier"]
        assert sorted(found("needle")) == sorted(["earlier", SID])
    finally:
        dispatcher.kill()
        dispatcher.wait(10)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("5",)
        assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == [
            ("records_ad",)
        ]
        # each row indexed once: a second entry for a rowid would be a second hit
        hits = conn.execute("SELECT rowid FROM records_fts WHERE records_fts MATCH 'eed'")
        assert sorted(r for (r,) in hits) == [1, 2]
