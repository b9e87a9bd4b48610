"""Counters survive a dispatcher SIGKILLed again and again, each time within a second
of starting (the real detached dispatcher, a real file consumer)."""

from __future__ import annotations

import json
import os
import random
import signal
import time

import pytest

from .conftest import payload
from .helpers import counters_of, lines, spool_directly, start_dispatcher, wait_until

MAX_RECORDS = 10  # a kill can cost the counts of the one batch it lands in, no more


@pytest.mark.slow
def test_repeated_kills_within_a_second_keep_the_counts(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    install.sensor(
        "killed",
        f"""\
        rules:
          calls:
            sections: [tool_call, session_start, session_end]
            delivery: at_least_once
            batch: {{max_records: {MAX_RECORDS}}}
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    base = payload("PreToolUse")
    calls = [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:05d}"}) for i in range(1600)]
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls[:400]])
    rnd = random.Random(20261202)
    kills = 0
    for kills in range(1, 16):
        # each dispatcher is killed just after its first delivery: well before the
        # once-a-second flush a dispatcher makes when it lives long enough
        proc = start_dispatcher(install)
        had = len(lines(out))
        wait_until(lambda p=proc, n=had: len(lines(out)) > n or p.poll() is not None, step=0.01)
        time.sleep(rnd.uniform(0, 0.05))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        spool_directly(install, calls[400 + 80 * (kills - 1) : 400 + 80 * kills])
    assert kills >= 10, "the run finished before it could be killed enough"
    before_last = {r["rule_seq"] for r in lines(out)}
    spool_directly(install, [*calls[400 + 80 * kills :], ("SessionEnd", payload("SessionEnd"))])
    start_dispatcher(install).wait(timeout=300)

    got = lines(out)
    distinct = {r["rule_seq"] for r in got}
    assert distinct == set(range(1, 1603))  # session_start, 1600 calls, session_end
    assert len(before_last) >= kills  # each killed dispatcher delivered something
    counts = counters_of(install, "killed/calls")
    slack = kills * MAX_RECORDS
    # every delivery counted, but what a kill cut short; never more than was written
    assert len(distinct) - slack <= counts["delivered"] <= len(got), (counts, kills)
    # numbered exactly once each: a batch's counts go with its commit's mark, and a kill
    # between the cursor's save and them leaves the mark behind, for the next run
    assert counts["dispatched"] == len(distinct), (counts, kills)


def test_a_rewrite_killed_before_its_cut_keeps_the_new_totals(install):
    """update_json_locked writes over the old text, then cuts: a kill in between leaves
    the new object and the old one's tail, which `ways status` (and the next writer)
    read as the new totals, never as none."""
    folder = install.state_root / "counters"
    folder.mkdir(parents=True, mode=0o700)
    path = folder / "killed.calls.json"
    path.write_text('{"delivered": 7, "dispatched": 7}' + '0, "dispatched": 1}')
    path.chmod(0o600)
    r = install.ways("status", "--json")
    assert r.returncode == 0, r.stderr
    [rule] = [x for x in json.loads(r.stdout)["rules"] if x["rule"] == "killed/calls"]
    assert rule["counters"]["delivered"] == 7 and rule["counters"]["dispatched"] == 7
