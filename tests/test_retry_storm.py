"""A receiver that asks for no wait at all (issue 22, defect 4), through the real hook, the
detached dispatcher and a real loopback HTTP server: `429` with `Retry-After: 0`, or
`503` with a date in the past. The server's wait is honoured with our own backoff as
its floor (0.25 s doubling), so the attempts in a few seconds are a handful whatever the
machine's speed (a slower machine makes fewer), and the identical failure lines are
written a few times, then counted rather than written."""

from __future__ import annotations

import itertools
import time

import pytest

from .helpers import logged
from .servers import Server

WINDOW = 4.0  # seconds of retrying looked at
# the floor allows at most 1 + log2(WINDOW / 0.25) = 5 attempts in WINDOW; a storm
# makes hundreds
MOST = 6


@pytest.mark.parametrize(
    "status, header",
    [(429, "0"), (503, "Wed, 21 Oct 2015 07:28:00 GMT")],
)
def test_a_receiver_asking_for_no_wait_gets_no_retry_storm(install, status, header):
    server = Server("script", script=[(status, {"Retry-After": header})] * 100_000)
    try:
        install.sensor(
            "remote",
            f"""\
            rules:
              r:
                sections: [tool_call]
                delivery: at_least_once
                timeout: 2s
                dispatch: {{http: {{url: '{server.url}'}}}}
            """,
        )
        p = {
            "session_id": f"storm-{status}",
            "hook_event_name": "PreToolUse",
            "cwd": str(install.project),
            "tool_name": "Bash",
            "tool_use_id": "toolu_1",
            "tool_input": {"command": "ls"},
        }
        r = install.hook(p)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        end = time.monotonic() + 60
        while not server.attempts and time.monotonic() < end:
            time.sleep(0.01)
        assert server.attempts, "the dispatcher never tried"
        first = server.attempts[0][0]
        time.sleep(WINDOW)
        within = [t for t, _, _ in server.attempts if t - first < WINDOW]
        assert 2 <= len(within) <= MOST, len(within)
        gaps = [b - a for a, b in itertools.pairwise(within)]
        assert all(g >= 0.2 for g in gaps), gaps  # the floor: 0.25 s at least
        lines = logged(install, "dispatch.refused")
        assert 1 <= len(lines) <= 3 + 1, len(lines)  # written a few times, then counted
    finally:
        server.close()
