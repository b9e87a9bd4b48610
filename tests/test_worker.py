"""The worker in process (worker.py), on a journal and a clock of the test's own: backoff,
Retry-After and lingering in virtual time, never by sleeping; the consumer is a real
loopback HTTP server. The worker inside the real dispatcher: test_dispatcher.py."""

from __future__ import annotations

from ways_sensors import records
from ways_sensors.config.rules import LoadedRule
from ways_sensors.config.specdecode import decode_rule
from ways_sensors.dispatch.journal import Journal
from ways_sensors.dispatch.worker import Worker
from ways_sensors.state import counters
from ways_sensors.state.layout import Layout
from ways_sensors.state.session import Session

from .helpers import VirtualClock
from .servers import Server

SID = "0b6f5f5e-9d59-4a57-a3f3-0d7c1f0f0a02"
JITTER = 1.25  # a wait may be longer than its base by at most a quarter (delivery.py)


def _worker(tmp_path, dispatch: dict, **rule) -> tuple[Worker, Journal, VirtualClock]:
    session = Session(SID, Layout(str(tmp_path / "state")))
    session.create()
    journal = Journal(session.journal, SID)
    spec = decode_rule(
        {"sections": ["session_end"], "dispatch": dispatch, "delivery": "at_least_once", **rule}
    )
    clock = VirtualClock()
    worker = Worker(
        journal,
        session,
        LoadedRule("s", "r", spec, lambda rec: True, "user", "s.yaml"),
        clock=clock,
    )
    return worker, journal, clock


def _add(journal: Journal, *reasons: str) -> None:
    journal.stage_drafts(
        [records.Draft("session_end", "", "2026-01-01T00:00:00Z", {"reason": r}) for r in reasons],
        "/p",
    )
    journal.commit()


def test_a_refusing_consumer_gets_the_batch_again_after_a_doubling_backoff(tmp_path):
    server = Server("script", script=[(503, {})] * 4)
    try:
        worker, journal, clock = _worker(tmp_path, {"http": {"url": server.url}})
        _add(journal, "a", "b")
        assert worker.step()  # refused four times, then accepted: one step, no real sleep
        assert [s for _, s, _ in server.attempts] == [503, 503, 503, 503, 200]
        assert len(clock.slept) == 4
        for wait, base in zip(clock.slept, [0.25, 0.5, 1.0, 2.0], strict=True):
            assert base <= wait <= base * JITTER, clock.slept
        worker.tally.flush()
        assert counters.read_all(worker.session.layout)[worker.rid]["retries"] == 4
    finally:
        server.close()


def test_retry_after_is_waited_for_and_never_hammered(tmp_path):
    server = Server("script", script=[(429, {"Retry-After": "3"}), (503, {"Retry-After": "7"})])
    try:
        worker, journal, clock = _worker(tmp_path, {"http": {"url": server.url}})
        _add(journal, "a")
        assert worker.step()
        assert [s for _, s, _ in server.attempts] == [429, 503, 200]
        (first, second) = clock.slept
        assert 3.0 <= first <= 3.0 * JITTER and 7.0 <= second <= 7.0 * JITTER
    finally:
        server.close()


def test_a_save_that_fails_leaves_cursor_chain_and_tree_as_they_were(tmp_path, monkeypatch):
    """A full disk at the commit (the cursor log's append fails: ENOSPC, at the
    filesystem seam) must leave the cursor, its chain head and the rule's tree as they
    were: the batch is collected again, and what the consumer (a real loopback server)
    received verifies with `ways sensors verify --key` (a tree one batch behind its
    cursor made an untouched file look edited)."""
    import errno
    import json
    import subprocess
    import sys
    from pathlib import Path

    from ways_sensors.evidence.keys import Keyring

    config = tmp_path / "config" / "agent-ways" / "config.yaml"  # a checkpoint per batch
    config.parent.mkdir(parents=True)
    config.write_text("ways:\n  evidence:\n    checkpoint_seconds: 0\n    witness_seconds: 0\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    server = Server("accept")
    try:
        worker, journal, _ = _worker(
            tmp_path, {"http": {"url": server.url}}, chain=True, batch={"max_records": 1}
        )
        real, failed = worker.cursors.save, []

        def full_disk(rid, st, batch):
            if st.get("pending") and not failed:
                failed.append(st["rule_seq"])
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(rid, st, batch)

        worker.cursors.save = full_disk
        _add(journal, "a", "b", "c")
        try:
            worker.step()
            raise AssertionError("the save did not fail")
        except OSError:
            worker._rewind()  # as the worker's loop does after an error
        while worker.step():
            pass
        assert failed == [1]
    finally:
        server.close()
    sent = [r for b in server.bodies for r in (b if isinstance(b, list) else [b])]
    lines = [json.dumps(r) for r in sent]
    assert sum('"checkpoint"' in x for x in lines) == 3
    copy = tmp_path / "received.jsonl"
    copy.write_text("\n".join(lines) + "\n")
    root = Keyring(worker.session.layout).root()
    assert root is not None
    ways = str(Path(sys.executable).parent / "ways")
    r = subprocess.run(
        [ways, "sensors", "verify", str(copy), "--key", root.vkey, "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    evidence = json.loads(r.stdout)["evidence"]
    # nothing differs; only the end is unproven: no dispatcher left to close the tree here
    assert {b["kind"] for b in evidence["breaks"]} <= {"end"}, r.stdout + r.stderr
    assert evidence["trees"][0]["signed_size"] == 3


def test_a_step_that_fails_again_and_again_does_not_hold_the_dispatcher(tmp_path):
    """A disk that stays full: every commit's cursor save fails (ENOSPC, at the filesystem
    seam). The worker tries again after each pause, and meanwhile counts as backing off,
    as a worker whose consumer is down does, so the dispatcher (which leaves once every
    worker is idle: dispatcher.py) is not held for as long as the disk stays full. Room
    again: the record goes."""
    import errno
    import threading

    from .helpers import lines, wait_until

    out = tmp_path / "o.jsonl"
    worker, journal, _ = _worker(tmp_path, {"file": {"path": str(out)}})
    real = worker.cursors.save

    def full_disk(rid, st, batch):
        raise OSError(errno.ENOSPC, "No space left on device")

    worker.cursors.save = full_disk
    _add(journal, "a")
    assert not worker.idle  # a record owed
    t = threading.Thread(target=worker.burst)
    t.start()
    try:
        assert wait_until(lambda: worker.failing)
        assert worker.backing_off and worker.idle and not worker.done()
    finally:
        worker.halt()
        journal.wake()  # as the crew does: the worker's nap ends
        t.join(10)
    assert not t.is_alive()
    worker.cursors.save = real
    worker.stop.clear()
    worker.burst()  # until nothing is left to do
    assert not worker.failing and [r["data"]["reason"] for r in lines(out)] == ["a"]
