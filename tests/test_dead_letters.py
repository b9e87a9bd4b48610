"""Dead letters through the real hook and detached dispatcher against a real loopback
consumer: a refused credential (401, 403) is retried with the backoff, never parked;
the dead-letter files stay bounded (rotation, every record given up counted in
events.log) and retention removes old ones."""

from __future__ import annotations

import os
import time

from ways_sensors.pipeline.deadletters import DEADLETTER_MAX

from .helpers import counters_of, dispatcher_alive, logged, status, wait_until
from .servers import Server
from .sessions import SID, ScriptedSession

BIG = 1_500_000  # bytes of tool output per record: 14 of them are 21 MB


def test_a_refused_credential_is_retried_until_the_token_works_not_parked(install, tmp_path):
    # an expired token (401), then a revoked one (403), then the renewed one works
    server = Server("script", script=[(401, {}), (401, {}), (403, {}), (401, {})])
    try:
        install.sensor(
            "remote",
            f"""\
            rules:
              prompts:
                sections: [user_prompt, session_end]
                delivery: at_least_once
                dispatch: {{http: {{url: '{server.url}'}}}}
            """,
        )
        ScriptedSession(install, tmp_path / "t").play()

        # the records first: "no dispatcher alive" also holds before the detached one
        # has taken its lock (it did on a clean-clone run: nothing was tried yet)
        def delivered() -> list[int]:
            return [
                rec["rule_seq"]
                for body in server.bodies  # the accepted ones
                for rec in (body if isinstance(body, list) else [body])
            ]

        assert wait_until(lambda: sorted(set(delivered())) == [1, 2, 3], timeout=120)
        assert wait_until(lambda: not dispatcher_alive(install, SID), timeout=60)
        got = delivered()
    finally:
        server.close()
    counts = counters_of(install, "remote/prompts")
    assert counts["rejected"] == 0 and counts["lost"] == 0
    assert counts["delivered"] == 3 and counts["retries"] >= 4
    assert sorted(set(got)) == [1, 2, 3]
    assert status(install)["dead_letters"] == []
    assert not (install.state_root / "deadletters").exists() or not any(
        (install.state_root / "deadletters").iterdir()
    )
    refused = [e for e in logged(install) if e["kind"] == "dispatch.refused"]
    assert [e["detail"] for e in refused[:4]] == [
        "HTTP 401: credentials refused",
        "HTTP 401: credentials refused",
        "HTTP 403: credentials refused",
        "HTTP 401: credentials refused",
    ]
    assert {e["outcome"] for e in refused} == {"retryable"}


def big_session(install, sid: str, n: int) -> None:
    def hook(event: str, **fields) -> None:
        payload = {
            "session_id": sid,
            "transcript_path": str(install.root / f"{sid}.jsonl"),
            "cwd": str(install.project),
            "hook_event_name": event,
            **fields,
        }
        r = install.hook(payload)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")

    hook("SessionStart", source="startup")
    for i in range(n):
        out = f"{i:04d}" + "x" * BIG
        tool = {"tool_name": "Bash", "tool_use_id": f"toolu_{i:04d}", "tool_input": {}}
        hook("PostToolUse", tool_response={"stdout": out}, **tool)
    hook("SessionEnd", reason="other")


def test_dead_letters_are_bounded_rotated_counted_and_under_retention(install, tmp_path):
    n = 14  # 21 MB refused for good: more than twice the cap
    server = Server("script", script=[(400, {})] * 1000)
    ran = tmp_path / "ran.jsonl"
    try:
        install.sensor(
            "refused",
            f"""\
            rules:
              results:
                sections: [tool_result]
                delivery: at_least_once
                redact: none
                dispatch: {{http: {{url: '{server.url}'}}}}
              starts:
                sections: [session_start]
                dispatch: {{file: {{path: '{ran}'}}}}
            """,
        )
        big_session(install, "big-1", n)
        assert wait_until(lambda: not dispatcher_alive(install, "big-1"), timeout=120)
    finally:
        server.close()
    assert counters_of(install, "refused/results")["rejected"] == n

    folder = install.state_root / "deadletters"
    files = sorted(folder.iterdir())
    assert [p.name for p in files] == ["refused.results.jsonl", "refused.results.jsonl.1"]
    sizes = [p.stat().st_size for p in files]
    assert all(size <= DEADLETTER_MAX + BIG + 4096 for size in sizes), sizes
    kept = sum(len(p.read_bytes().splitlines()) for p in files)
    log = logged(install)
    rotated = [e for e in log if e["kind"] == "dead_letter.rotated"]
    assert rotated and all(e["rule"] == "results" for e in rotated)
    assert kept + sum(e["rotated_out"] for e in rotated) == n  # none given up silently
    assert kept < n
    [dead] = status(install)["dead_letters"]
    assert dead["count"] == kept  # both files counted
    r = install.ways("status", "--prometheus")
    assert f'ways_sensors_dead_letters{{sensor="refused",rule="results"}} {kept}' in r.stdout
    for p in files:
        assert oct(p.stat().st_mode & 0o777) == "0o600"

    # past the dead letters' retention, the next dispatcher's sweep removes both files
    old = time.time() - 31 * 86400
    for p in files:
        os.utime(p, (old, old))
    big_session(install, "big-2", 0)  # a session start only: nothing parked
    assert wait_until(lambda: not any(folder.iterdir()), timeout=60)
    # each file's line is logged right after its unlink: wait for both lines
    gone = lambda: [e for e in logged(install) if e["kind"] == "retention.dead_letters_removed"]  # noqa: E731
    assert wait_until(lambda: len(gone()) == len(files), timeout=60)
    removed = gone()
    assert sum(e["records"] for e in removed) == kept
    assert {e["rule"] for e in removed} == {"refused.results"}
    assert status(install)["dead_letters"] == []
