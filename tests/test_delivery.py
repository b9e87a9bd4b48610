"""Permanent and retryable failures through the real hook and detached dispatcher:
dead letters, `rejected`, Retry-After, and the backoff's arithmetic."""

from __future__ import annotations

import json
import stat

from ways_sensors.pipeline import delivery
from ways_sensors.targets.base import permanent, retryable

from .conftest import payload
from .helpers import SID, counters_of, play, status, wait_until
from .servers import Server

PROMPTS = ["first prompt: refused", "second prompt", "third prompt"]


def at_least_once_http(install, server: Server, sections: str = "[user_prompt]") -> None:
    install.sensor(
        "remote",
        f"""\
        rules:
          r:
            sections: {sections}
            delivery: at_least_once
            timeout: 5s
            dispatch: {{http: {{url: '{server.url}'}}}}
        """,
    )


def prompts(install, texts: list[str]) -> None:
    for text in texts:
        r = install.hook({**payload("UserPromptSubmit"), "prompt": text})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def dead_letters(install, name: str) -> list[dict]:
    path = install.state_root / "deadletters" / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_400_is_parked_and_the_records_behind_it_are_delivered(install):
    server = Server("script", script=[(400, {})])
    try:
        at_least_once_http(install, server)
        play(install, ["SessionStart"])
        prompts(install, PROMPTS)
        got = server.wait_for(2, timeout=30)  # before the fix: record 1 retried forever
        assert [r["data"]["prompt"] for r in got] == PROMPTS[1:]
        assert [r["rule_seq"] for r in got] == [2, 3]
        assert [a[1] for a in server.attempts] == [400, 200, 200]  # never retried
        # counters are flushed in batches: wait for the whole tally, not its first kind
        want = {"rejected": 1, "refusals": 1, "delivered": 2, "retries": 0, "lost": 0}
        assert wait_until(
            lambda: {k: counters_of(install, "remote/r").get(k, 0) for k in want} == want
        ), counters_of(install, "remote/r")

        [parked] = dead_letters(install, "remote.r")
        assert (parked["cause"], parked["reason"], parked["session"]) == (
            "refused",
            "HTTP 400",
            SID,
        )
        assert parked["record"]["rule_seq"] == 1
        assert parked["record"]["data"]["prompt"] == PROMPTS[0]
        path = install.state_root / "deadletters" / "remote.r.jsonl"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

        [entry] = status(install)["dead_letters"]
        assert entry == {"rule": "remote/r", "path": str(path), "count": 1}
        human = install.ways("status").stdout
        assert "REJECTED" in human
        assert f"remote/r: 1 record(s) refused for good, kept in {path}" in human

        log = (install.state_root / "events.log").read_text()
        kinds = [json.loads(x)["kind"] for x in log.splitlines()]
        assert kinds.count("dispatch.refused") == 1 and kinds.count("dispatch.dead_letter") == 1
        assert "first prompt" not in log  # content-free
    finally:
        server.close()


def test_503_with_retry_after_waits_that_long_then_delivers(install):
    server = Server("script", script=[(503, {"Retry-After": "1"})])
    try:
        at_least_once_http(install, server)
        prompts(install, PROMPTS[1:2])
        [rec] = server.wait_for(1, timeout=30)
        assert rec["rule_seq"] == 1 and rec["data"]["prompt"] == PROMPTS[1]
        (t503, s1, _), (t200, s2, _) = server.attempts
        assert (s1, s2) == (503, 200)
        # the backoff alone would have tried again after 0.25 s
        assert t200 - t503 >= 0.8
        assert wait_until(lambda: counters_of(install, "remote/r")["delivered"] == 1)
        c = counters_of(install, "remote/r")
        assert (c["retries"], c["rejected"]) == (1, 0)
        assert dead_letters(install, "remote.r") == []
    finally:
        server.close()


def test_429_is_retried_until_accepted(install):
    server = Server("script", script=[(429, {}), (429, {})])
    try:
        at_least_once_http(install, server)
        prompts(install, PROMPTS[:1])
        [rec] = server.wait_for(1, timeout=30)
        assert rec["rule_seq"] == 1
        assert [a[1] for a in server.attempts] == [429, 429, 200]
        assert wait_until(lambda: counters_of(install, "remote/r")["delivered"] == 1)
        assert counters_of(install, "remote/r")["retries"] == 2
        assert dead_letters(install, "remote.r") == []
    finally:
        server.close()


def test_configuration_errors_are_permanent_and_never_stall_the_session(install, tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    install.sensor(
        "broken",
        f"""\
        rules:
          no-command:
            sections: [user_prompt, session_end]
            delivery: at_least_once
            dispatch: {{command: {{argv: [{tmp_path}/no-such-consumer]}}}}
          folder:
            sections: [user_prompt, session_end]
            delivery: at_least_once
            batch: {{max_records: 1}}  # one attempt per record, as the others (counted below)
            dispatch: {{file: {{path: '{folder}'}}}}
        """,
    )
    play(install, ["SessionStart"])
    prompts(install, PROMPTS[:1])
    play(install, ["SessionEnd"])
    # a rule stuck on a retry would keep the dispatcher alive and the session folder
    assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=60)
    assert not (install.state_root / "pending" / SID).exists()
    reasons = {
        "broken.no-command": "cannot run the command: ENOENT",
        "broken.folder": "EISDIR",
    }
    for rid, reason in reasons.items():
        parked = dead_letters(install, rid)
        assert [p["record"]["section"] for p in parked] == ["user_prompt", "session_end"], rid
        assert {(p["cause"], p["reason"]) for p in parked} == {("error", reason)}, rid
        c = counters_of(install, rid.replace(".", "/"))
        assert (c["rejected"], c["errors"], c["retries"]) == (2, 2, 0), rid
    listed = {d["rule"]: d["count"] for d in status(install)["dead_letters"]}
    assert listed == {"broken/no-command": 2, "broken/folder": 2}  # an unset header: held
    # (tests/test_unset_header.py)


def test_best_effort_is_unchanged_one_attempt_and_lost(install):
    server = Server("script", script=[(400, {}), (503, {})])
    try:
        install.sensor(
            "remote",
            f"rules:\n  r:\n    sections: [user_prompt]\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n",
        )
        prompts(install, PROMPTS)
        server.wait_for(1, timeout=30)
        assert [r["rule_seq"] for r in server.bodies] == [3]
        assert [a[1] for a in server.attempts] == [400, 503, 200]
        assert wait_until(lambda: counters_of(install, "remote/r")["lost"] == 2)
        assert counters_of(install, "remote/r")["rejected"] == 0
        assert not (install.state_root / "deadletters").exists()
    finally:
        server.close()


def test_next_wait_takes_retry_after_floored_by_the_backoff_capped_and_jittered():
    def within(backoff, outcome, wait):
        got = [delivery.next_wait(backoff, outcome) for _ in range(200)]
        assert all(wait <= g <= wait * (1 + delivery.JITTER) for g in got), (wait, got[:5])
        assert len(set(got)) > 1  # jittered

    within(0.5, retryable("refused", "HTTP 503"), 0.5)
    within(0.5, retryable("refused", "HTTP 503", 1.0), 1.0)
    within(0.5, retryable("refused", "HTTP 429", 0.0), 0.5)  # never below the backoff
    within(0.5, retryable("refused", "HTTP 429", 86400.0), delivery.BACKOFF_CAP)
    within(2.0, permanent("refused", "HTTP 400"), 2.0)
