"""The store target: rows in SQLite, stored once however often a batch comes, private
files, several writer processes at once, busy and broken databases, retention."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import time

from ways_sensors.targets import ACCEPTED, ERROR, PERMANENT, RETRYABLE, TIMEOUT, Context, Item
from ways_sensors.targets import store as target
from ways_sensors.targets.store import StoreTarget

CTX = Context("store", "all", session_id="s1", date="2026-11-29")


def rec(seq: int, sid: str = "s1", ts: str = "2026-11-29T11:40:02.123Z", **data) -> dict:
    return {
        "schema": "ways.sensor.record/1",
        "section": "tool_call",
        "seq": seq,
        "session_id": sid,
        "agent": "codex",
        "agent_id": None,
        "agent_type": "main",
        "timestamp": ts,
        "project": "/p",
        "data": {"tool_name": "Bash", "tool_kind": "shell", "input": {"command": f"ls {seq}"}}
        | data,
        "sensor": "store",
        "rule": "all",
        "rule_seq": seq,
    }


def items(recs: list[dict]) -> list[Item]:
    return [Item(r, json.dumps(r).encode()) for r in recs]


def rows(path) -> list[tuple]:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT session_id, rule_seq, text FROM records ORDER BY id").fetchall()


def deliver(spec, recs, timeout=5.0):
    return target.deliver(spec, items(recs), CTX, time.monotonic() + timeout)


def test_a_batch_is_stored_once_in_private_files(tmp_path):
    path = tmp_path / "a" / "b" / "s.db"
    spec = StoreTarget(path=str(path))
    batch = [rec(1), rec(2), rec(3)]
    assert deliver(spec, batch).status == ACCEPTED
    assert deliver(spec, [*batch[1:], rec(4)]).status == ACCEPTED  # a resent batch, and one more
    target.close()
    assert [(s, n) for s, n, _ in rows(path)] == [("s1", 1), ("s1", 2), ("s1", 3), ("s1", 4)]
    assert rows(path)[0][2] == "ls 1"  # data's strings but the tool's name, kind and id
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT records, tools FROM sessions").fetchall() == [(4, 4)]
    for p in (path, path.with_name("s.db-wal"), path.with_name("s.db-shm")):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    for folder in (path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_the_default_database_is_under_the_data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert deliver(StoreTarget(), [rec(1)]).status == ACCEPTED
    target.close()
    assert (tmp_path / "data" / "agent-ways" / "store" / "sessions.db").exists()
    assert target.destination(StoreTarget()).endswith("/data/agent-ways/store/sessions.db")
    assert not target.off_machine(StoreTarget())


def test_writer_processes_at_once_lose_nothing_and_double_nothing(tmp_path):
    """Four processes (as four sessions' dispatchers) write 200 records each, in batches
    of 10, each batch twice; every record is there once."""
    path = tmp_path / "s.db"
    code = (
        "import json, sys, time\n"
        "from ways_sensors.targets import Context, Item, store\n"
        "sid = sys.argv[2]\n"
        "spec = store.StoreTarget(path=sys.argv[1])\n"
        "for start in range(1, 201, 10):\n"
        "    recs = [{'section': 'user_prompt', 'session_id': sid, 'seq': n,\n"
        "             'timestamp': '2026-11-29T11:40:02.123Z', 'sensor': 's', 'rule': 'r',\n"
        "             'rule_seq': n, 'data': {'prompt': f'p {sid} {n}'}}\n"
        "            for n in range(start, start + 10)]\n"
        "    batch = [Item(r, json.dumps(r).encode()) for r in recs]\n"
        "    for _ in range(2):\n"
        "        while True:\n"
        "            out = store.deliver(spec, batch, Context('s', 'r'), time.monotonic() + 5)\n"
        "            if out.accepted: break\n"
        "            assert out.status == 'retryable', out\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"s{i}"]) for i in range(4)]
    assert [p.wait(120) for p in procs] == [0, 0, 0, 0]
    with sqlite3.connect(path) as c:
        got = c.execute("SELECT session_id, rule_seq FROM records").fetchall()
        sessions = dict(c.execute("SELECT session_id, records FROM sessions").fetchall())
    assert sorted(got) == sorted((f"s{i}", n) for i in range(4) for n in range(1, 201))
    assert sessions == {f"s{i}": 200 for i in range(4)}


def test_a_database_held_by_another_writer_is_a_retryable_timeout(tmp_path):
    path = tmp_path / "s.db"
    spec = StoreTarget(path=str(path))
    assert deliver(spec, [rec(1)]).status == ACCEPTED
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out = deliver(spec, [rec(2)], timeout=0.3)
        assert (out.status, out.cause) == (RETRYABLE, TIMEOUT)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert deliver(spec, [rec(2)]).status == ACCEPTED  # the same batch passes after
    target.close()
    assert [n for _, n, _ in rows(path)] == [1, 2]


def test_a_path_through_a_file_or_not_a_store_is_permanent(tmp_path):
    (tmp_path / "f").write_text("a file, not a folder")
    out = deliver(StoreTarget(path=str(tmp_path / "f" / "s.db")), [rec(1)])
    assert (out.status, out.cause, out.detail) == (PERMANENT, ERROR, "ENOTDIR")
    (tmp_path / "junk.db").write_bytes(b"not sqlite at all" * 100)
    out = deliver(StoreTarget(path=str(tmp_path / "junk.db")), [rec(1)])
    assert (out.status, out.detail) == (PERMANENT, "StoreError")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        c.execute("INSERT INTO meta VALUES ('schema', '99')")
    assert deliver(StoreTarget(path=str(other)), [rec(1)]).status == PERMANENT


def test_checkpoints_are_kept_apart_from_records(tmp_path):
    path = tmp_path / "s.db"
    checkpoint = {
        "schema": "ways.sensor.checkpoint/1",
        "section": "checkpoint",
        "session_id": "s1",
        "sensor": "store",
        "rule": "all",
        "last_rule_seq": 2,
        "checkpoint": "origin\n2\nroot=\n",
    }
    spec = StoreTarget(path=str(path))
    assert deliver(spec, [rec(1), rec(2), checkpoint]).status == ACCEPTED
    assert deliver(spec, [rec(1), rec(2), checkpoint]).status == ACCEPTED
    target.close()
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT count(*) FROM records").fetchone() == (2,)
        assert c.execute("SELECT last_rule_seq FROM checkpoints").fetchall() == [(2,)]
