"""At-least-once end to end through a relay tier (issue 37): ways -> a relay rsyslogd
(imrelp -> omrelp) -> a central rsyslogd (imrelp -> omfile), both run from the
reference configurations in docs/fleet/, 10,000 chained records from 4 sessions while
each rsyslogd is SIGKILLed and restarted 20 times at random: nothing is missing at the
central file, and `ways sensors verify --key` finds nothing but duplicates and, where a
kill cut a line, the torn fragment. bench/relay_tier.py gives the figures, plain TCP's
beside them (bench/RESULTS.md)."""

from __future__ import annotations

import json

import pytest

from ..relay import run_tier

pytestmark = pytest.mark.slow


def test_relp_through_a_killed_relay_tier_loses_nothing(install, tmp_path):
    got = run_tier(install, tmp_path, "relp")
    assert got["kills"] == {"relay": 20, "central": 20}
    assert (got["sent"], got["missing"]) == (10_000, 0), got
    report = json.loads(got["verify"])
    assert {b["kind"] for b in report["breaks"]} <= {"torn"}, report["breaks"]
    assert sum(c["duplicates"] for c in report["chains"]) == got["duplicates"]
    assert all(c["gaps"] == [] and c["first"] == 1 for c in report["chains"])
