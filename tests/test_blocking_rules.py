"""Blocking rules through the real hook (a subprocess, as the client runs it): the
shared deadline that caps a hung consumer, the warm index, and what the hook hands to
the detached dispatcher when an at_least_once delivery fails, cannot finish by the
deadline or is refused for good. Split from test_dispatcher.py so that neither module
alone holds a parallel run's longest stretch."""

from __future__ import annotations

import fcntl
import json
import os

from .conftest import payload
from .helpers import SID, counters_of, lines, logged, play, wait_until
from .servers import Server, free_port


def test_blocking_rule_against_a_hung_consumer(install, tmp_path):
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        f"""\
        rules:
          hung:
            sections: [tool_call]
            mode: blocking
            timeout: 30s
            dispatch: {{command: {{argv: [sleep, "1000"]}}}}
          second:
            sections: [tool_call]
            mode: blocking
            timeout: 9s
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    # `second` has nearly the whole cap: a loaded machine's hook start must not decide
    # whether it delivers; `hung` is still killed at the capped 10 s, not its 30 s
    r = install.hook(payload("PreToolUse"), timeout=25)  # raises if the cap failed
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    [rec] = lines(out)
    assert rec["rule"] == "second" and rec["rule_seq"] == 1 and rec["seq"] is None
    [timeout] = logged(install, "blocking.timeout")
    assert timeout["rule"] == "hung" and timeout["killed"] is True
    # killed at the shared deadline: the capped 10 s, not the rule's own 30 s
    assert 9000 <= timeout["duration_ms"] < 30000
    assert counters_of(install, "blk/hung")["kills"] == 1


def test_blocking_rules_on_a_warm_index(install, tmp_path):
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        f"rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    for _ in range(3):  # the first run builds the index, the others find it current
        r = install.hook(payload("PreToolUse"))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert [x["rule_seq"] for x in lines(out)] == [1, 2, 3]
    assert not (install.state_root / "events.log").exists()


def test_blocking_at_least_once_failure_is_redelivered(install, tmp_path):
    port = free_port()
    install.sensor(
        "blk",
        f"""\
        rules:
          r:
            sections: [user_prompt]
            mode: blocking
            delivery: at_least_once
            timeout: 1s
            dispatch: {{http: {{url: 'http://127.0.0.1:{port}/in'}}}}
        """,
    )
    install.config("ways:\n  dispatch_idle_seconds: 30\n")
    play(install, ["UserPromptSubmit"])  # refused: nobody listens
    server = Server("accept", port=port)
    try:
        [got] = server.wait_for(1, timeout=60)
        assert got["rule"] == "r" and got["rule_seq"] == 1
        assert got["data"]["prompt"] == payload("UserPromptSubmit")["prompt"]
    finally:
        server.close()


def test_blocking_at_least_once_unfinished_at_the_deadline_goes_through_the_dispatcher(
    install, tmp_path
):
    """An at_least_once job the hook cannot finish by its deadline (the test holds the
    rule's head lock, so it cannot, however fast or slow the machine) is handed to the
    dispatcher as built, never dropped: the dispatcher numbers, masks and delivers it
    once the lock is free (blocking.redelivered)."""
    out = tmp_path / "out.jsonl"
    install.sensor(
        "blk",
        f"""\
        rules:
          r:
            sections: [user_prompt]
            mode: blocking
            delivery: at_least_once
            timeout: 1s
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    folder = install.state_root
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for part in ("sessions", SID, "cursors"):
        folder = folder / part
        folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / "blk.r.lock", os.O_RDWR | os.O_CREAT, 0o600)
    secret = "ghp_" + "Zq8Lk2Rt5Vx9Pw3Nm6Hj1Gf4Ds7Ba0Ce" + "Yu2T"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        play(install, ["UserPromptSubmit"], prompt=f"my token {secret}")
        assert [e["unfinished"] for e in logged(install, "blocking.deadline")] == [1]
        assert not out.exists()  # nothing numbered nor sent while the lock is held
    finally:
        os.close(fd)
    assert wait_until(lambda: len(lines(out)) == 1, timeout=60)
    [got] = lines(out)
    assert (got["rule"], got["rule_seq"]) == ("r", 1)
    assert secret not in out.read_text() and "[REDACTED:" in got["data"]["prompt"]
    assert wait_until(lambda: counters_of(install, "blk/r").get("delivered") == 1)
    c = counters_of(install, "blk/r")
    assert (c["dispatched"], c.get("lost", 0)) == (1, 0)


def test_blocking_at_least_once_refused_for_good_is_parked_not_spooled(install, tmp_path):
    server = Server("script", script=[(400, {})])
    try:
        install.sensor(
            "blk",
            f"""\
            rules:
              r:
                sections: [user_prompt]
                mode: blocking
                delivery: at_least_once
                dispatch: {{http: {{url: '{server.url}'}}}}
            """,
        )
        play(install, ["SessionStart", "UserPromptSubmit"])
        # parked by the hook itself, before it returned
        path = install.state_root / "deadletters" / "blk.r.jsonl"
        [parked] = [json.loads(x) for x in path.read_text().splitlines()]
        assert (parked["origin"], parked["reason"]) == ("blocking", "HTTP 400")
        assert parked["record"]["rule_seq"] == 1
        assert counters_of(install, "blk/r")["rejected"] == 1
        play(install, ["UserPromptSubmit", "SessionEnd"])
        # a spooled retry would be refused again and again, and keep the session open
        assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=30)
        assert [a[1] for a in server.attempts] == [400, 200]
        assert [r["rule_seq"] for r in server.bodies] == [2]
    finally:
        server.close()
