"""A resumed session keeps being signed (evidence/carry.py): the tree goes on from what the
ledger kept after the session folder went (a session end, a retention sweep), and from
the cursor after a SIGKILL. Real hooks, real detached dispatchers, the real `verify`."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from ways_sensors.errors import NOT_SIGNED

from ..conftest import payload
from ..helpers import (
    SID,
    age,
    dispatcher_alive,
    dispatcher_done,
    dispatcher_pid,
    records,
    wait_until,
)
from .runs import audited, gone, hook, root_vkey


def run(install, start: int, stop: int, end: bool = True) -> None:
    """One run of the session: a start, tool calls `start`..`stop`, and its end."""
    hook(install, {**payload("SessionStart"), "source": "resume"})
    for i in range(start, stop):
        hook(install, {**payload("PreToolUse"), "tool_use_id": f"toolu_{i:04d}"})
    if end:
        hook(install, payload("SessionEnd"))


def verify(install, out: Path) -> tuple[int, str]:
    r = install.ways("sensors", "verify", str(out), "--key", root_vkey(install))
    return r.returncode, r.stdout + r.stderr


def logged(install, kind: str) -> list[dict]:
    path = install.state_root / "events.log"
    return [e for e in map(json.loads, path.read_text().splitlines()) if e.get("kind") == kind]


def test_a_session_resumed_after_each_end_is_signed_to_its_last_record(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    audited(install, out)
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    for n in range(3):  # `claude --resume SID` twice: each run ends, its folder goes
        run(install, 5 * n, 5 * n + 5)
        assert wait_until(lambda: gone(install), 60), "the session folder stayed"
        ledger = json.loads((install.state_root / "ledger" / f"{SID}.json").read_text())
        assert ledger["trees"]["audit/all"]["rule_seq"] == ledger["rules"]["audit/all"][0]
    rc, text = verify(install, out)
    assert rc == 0, text
    assert [r["rule_seq"] for r in records(out)] == list(range(1, 22))
    assert "signed: 21 records" in text
    assert not logged(install, "evidence.untracked")


def test_a_resume_after_a_sigkill_and_after_a_lost_end_is_signed(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    audited(install, out)
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    run(install, 0, 4, end=False)
    assert wait_until(lambda: dispatcher_pid(install) is not None)
    assert wait_until(lambda: len(records(out)) >= 5)
    os.kill(dispatcher_pid(install), signal.SIGKILL)  # the dispatcher dies mid-session
    assert wait_until(lambda: not dispatcher_alive(install))
    run(install, 4, 8, end=False)  # the next hook starts another; this run's end is lost

    # at least once: a batch the kill caught after its write and before its commit goes
    # again, so the file may hold its records twice
    def all_ten() -> bool:
        return {r["rule_seq"] for r in records(out)} == set(range(1, 11))

    assert wait_until(lambda: dispatcher_done(install) and all_ten(), 60)
    # the folder of a session that never ended is swept as abandoned by another
    # session's dispatcher: its ledger keeps the tree
    age(install.sessions() / SID, 8 * 86400)
    other = {**payload("SessionStart"), "session_id": "other-session"}
    hook(install, other)
    assert wait_until(lambda: gone(install), 60), "the abandoned folder stayed"
    run(install, 8, 12)  # resumed after retention removed its folder
    assert wait_until(lambda: gone(install), 60)
    rc, text = verify(install, out)
    assert rc == 0, text
    assert sorted({r["rule_seq"] for r in records(out)}) == list(range(1, 17))
    assert not logged(install, "evidence.untracked")


def test_a_ledger_without_a_tree_is_named_in_status(install, tmp_path):
    """A session left by a version before trees in the ledger cannot go on signing:
    loud in `ways status` (and its exit code), not only in events.log."""
    out = tmp_path / "audit.jsonl"
    audited(install, out)
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    run(install, 0, 3)
    assert wait_until(lambda: gone(install), 60)
    path = install.state_root / "ledger" / f"{SID}.json"
    ledger = json.loads(path.read_text())
    del ledger["trees"]  # as an older version wrote it
    path.write_text(json.dumps(ledger))
    run(install, 3, 5)
    assert wait_until(lambda: gone(install), 60)
    assert logged(install, "evidence.untracked")[0]["reason"] == "no_tree"
    r = install.ways("status")
    assert r.returncode == NOT_SIGNED, r.stdout + r.stderr
    assert "NOT SIGNED audit/all" in r.stdout
    rc, text = verify(install, out)
    assert rc == 3 and "unsigned" in text
