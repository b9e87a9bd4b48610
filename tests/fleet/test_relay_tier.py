"""At-least-once end to end through a relay tier (issue 37): ways -> a relay rsyslogd
(imrelp -> omrelp) -> a central rsyslogd (imrelp -> omfile), both run from the
reference configurations in docs/fleet/.

A relay acknowledges a message once its omrelp has it in its send window, before the
central server answered (targets/relp.py): with the central server stopped, the relay
still acknowledges a batch, and a relay killed then loses it. `relay_flush` makes the
batch wait for the central server's answer. Then the chaos run: 10,000 chained records
from 4 sessions while each rsyslogd is SIGKILLed and restarted 20 times at random:
nothing is missing at the central file, and `ways sensors verify --key` finds nothing
but duplicates and, where a kill cut a line, the torn fragment. bench/relay_tier.py
gives the figures, plain TCP's beside them (bench/RESULTS.md)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from ways_sensors.targets import ACCEPTED, RETRYABLE, Context, Item, syslog
from ways_sensors.targets.syslog import SyslogTarget

from ..formats import samples
from ..helpers import wait_until
from ..relay import run_tier, tier

RECORDS = samples.records()[:2]
BATCH = [Item(r, line) for r, line in zip(RECORDS, samples.lines(RECORDS), strict=True)]


def stopped(pid: int) -> bool:
    """Every thread of `pid` is stopped. SIGSTOP stops a thread when it next runs: on a
    loaded machine rsyslogd answered a frame or two after the signal was sent."""
    tasks = Path(f"/proc/{pid}/task")
    states = [(t / "stat").read_text().rpartition(")")[2].split()[0] for t in tasks.iterdir()]
    return all(state in ("T", "t") for state in states)


def send(spec: SyslogTarget, timeout: float):
    return syslog.deliver(spec, BATCH, Context("s", "r"), time.monotonic() + timeout)


def test_a_batch_counts_only_once_the_central_server_has_it(tmp_path):
    relay, central = tier(tmp_path, "relp")
    try:
        bare = SyslogTarget(host="127.0.0.1", port=relay.port, protocol="relp")
        flushed = SyslogTarget(host="127.0.0.1", port=relay.port, protocol="relp", relay_flush=2)
        assert send(flushed, 10).status == ACCEPTED
        assert len(central.records()) == 2
        central.proc.send_signal(signal.SIGSTOP)  # up, and answering nothing
        try:
            assert wait_until(lambda: stopped(central.proc.pid), timeout=10)
            # the relay acknowledges what the central server has not: the gap itself
            assert send(bare, 5).status == ACCEPTED
            # with the flush, the batch waits for the central server's answer
            out = send(flushed, 3)
            assert out.status == RETRYABLE, out
        finally:
            central.proc.send_signal(signal.SIGCONT)
        assert send(flushed, 10).status == ACCEPTED
        lines = central.out.read_text().splitlines()
        assert not [x for x in lines if "ways-flush" in x or not x.strip()], lines
        seqs = [r["rule_seq"] for r in central.records()]
        assert seqs.count(RECORDS[-1]["rule_seq"]) >= 3, seqs
    finally:
        relay.close()
        central.close()


@pytest.mark.slow
def test_relp_through_a_killed_relay_tier_loses_nothing(install, tmp_path):
    got = run_tier(install, tmp_path, "relp")
    assert got["kills"] == {"relay": 20, "central": 20}
    assert (got["sent"], got["missing"]) == (10_000, 0), got
    report = json.loads(got["verify"])
    assert {b["kind"] for b in report["breaks"]} <= {"torn"}, report["breaks"]
    assert sum(c["duplicates"] for c in report["chains"]) == got["duplicates"]
    assert all(c["gaps"] == [] and c["first"] == 1 for c in report["chains"])
