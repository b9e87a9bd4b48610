"""The journal seam (journal.py): one encoder for everything that appends, and a worker
that runs in-process on a journal and a clock of the test's own, with no dispatcher."""

from __future__ import annotations

import json
import threading

from ways_sensors import records
from ways_sensors.config.rules import LoadedRule
from ways_sensors.config.specdecode import decode_rule
from ways_sensors.dispatch.journal import FIRST_SEGMENT, Journal
from ways_sensors.dispatch.worker import Worker
from ways_sensors.state.cursorread import read_cursor
from ways_sensors.state.layout import Layout
from ways_sensors.state.session import Session

from .helpers import VirtualClock, no_checkpoints

SID = "0b6f5f5e-9d59-4a57-a3f3-0d7c1f0f0a01"


def _draft(text: str) -> records.Draft:
    return records.Draft("session_end", "", "2026-01-01T00:00:00Z", {"reason": text})


def test_every_append_is_utf8_through_the_one_encoder(tmp_path):
    """A lone surrogate (half an emoji) in a built record, a retry entry or a made-up
    session end becomes U+FFFD: the segment is strict UTF-8 and reads back whole."""
    j = Journal(str(tmp_path), SID)
    j.stage({"section": "__retry__", "record": {"data": "a\ud800b"}})
    assert j.stage_drafts([_draft("lost \udc00"), _draft("ok")], "/p") == 2
    j.commit()
    raw = (tmp_path / FIRST_SEGMENT).read_bytes()
    raw.decode("utf-8")  # strict: raises on surrogatepass bytes
    got = [rec for _, rec in j.read_from((FIRST_SEGMENT, 0)) or []]
    assert got[0]["record"]["data"] == "a\ufffdb"
    assert [(r["seq"], r["data"]["reason"]) for r in got[1:]] == [(1, "lost \ufffd"), (2, "ok")]
    assert j.end == (FIRST_SEGMENT, len(raw)) and j.seq == 2


def test_staging_is_all_or_none_and_a_commit_wakes_readers(tmp_path):
    committed = []
    j = Journal(str(tmp_path), SID, on_commit=lambda: committed.append((j.end, j.seq)))
    bad = _draft("x")
    bad.data["odd"] = {("a", "b"): 1}  # a key JSON cannot carry: json.dumps raises
    try:
        j.stage_drafts([_draft("a"), bad], "/p")
    except TypeError:
        pass
    assert j.seq == 0  # nothing numbered, nothing staged
    seen = j.generation
    woke = threading.Event()

    def reader() -> None:
        j.wait(seen, threading.Event(), 30.0)
        woke.set()

    t = threading.Thread(target=reader)
    t.start()
    j.stage_drafts([_draft("a")], "/p")
    j.commit()
    t.join(30.0)
    assert woke.is_set() and j.generation == seen + 1
    assert committed == [(j.end, 1)]  # the owner committed after the append


def test_a_worker_delivers_in_process_from_a_journal_without_a_dispatcher(tmp_path):
    session = Session(SID, Layout(str(tmp_path / "state")))
    session.create()
    journal = Journal(session.journal, SID)
    out = tmp_path / "out.jsonl"
    spec = decode_rule(
        {
            "sections": ["session_end"],
            "dispatch": {"file": {"path": str(out), "format": "json"}},
            "delivery": "at_least_once",
            "chain": True,
        }
    )
    rule = LoadedRule("s", "r", spec, lambda rec: True, "user", "s.yaml")
    clock = VirtualClock()
    worker = Worker(journal, session, rule, clock=clock)  # a new rule: from now on
    journal.stage_drafts([_draft(str(i)) for i in range(3)], "/p")
    journal.commit()
    assert not worker.done()
    assert worker.step()  # one batch: collected, committed, delivered
    lines = no_checkpoints([json.loads(x) for x in out.read_bytes().splitlines()])
    assert [(r["rule_seq"], r["data"]["reason"]) for r in lines] == [(1, "0"), (2, "1"), (3, "2")]
    assert worker.done() and not worker.step()
    cursor = read_cursor(session.cursors, worker.rid)
    assert cursor["rule_seq"] == 3 and cursor["pending"] is None
    assert clock.slept == []  # nothing failed: no backoff
