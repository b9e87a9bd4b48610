"""A `${VAR}` header whose variable is missing from the dispatcher's environment is a
fault of the set-up, not a refusal: through the real hook and detached dispatcher the
records are held (owed, retried, never parked), `ways status` and `lint` name the
variable, and once a dispatcher runs where it is set (the one the session's next hook
starts, after the first exited owing them) every record goes, with the header."""

from __future__ import annotations

from ways_sensors.errors import UNHEALTHY

from .helpers import counters_of, dispatcher_alive, status, wait_until
from .servers import Server
from .sessions import SID, ScriptedSession

VAR = "WAYS_TEST_HELD_TOKEN"


def test_an_unset_header_variable_holds_the_records_until_it_is_set(install, tmp_path):
    install.env.pop(VAR, None)
    # the dispatcher exits owing the records (below) once idle but for its retries: after
    # this long rather than the default minute
    install.config("ways:\n  dispatch_idle_seconds: 10\n")
    server = Server("accept")
    try:
        install.sensor(
            "remote",
            f"""\
            rules:
              prompts:
                sections: [user_prompt, tool_call, session_end]
                delivery: at_least_once
                dispatch:
                  http:
                    url: '{server.url}'
                    headers: {{X-Token: "${{{VAR}}}"}}
            """,
        )
        s = ScriptedSession(install, tmp_path / "t")
        s.play(end=False)
        assert wait_until(lambda: counters_of(install, "remote/prompts")["retries"] >= 2)
        data = status(install)
        [rule] = [r for r in data["rules"] if r["rule"] == "remote/prompts"]
        assert rule["health"]["last_error"] == f"header variable {VAR} is not set"
        assert rule["health"]["owed"] >= 2 and rule["health"]["dead_letters"] == 0
        assert data["dead_letters"] == [] and rule["counters"]["rejected"] == 0
        assert server.attempts == []  # nothing was sent without it
        text = install.ways("status", "--threshold", "0")
        assert text.returncode == UNHEALTHY
        assert f"last error 'header variable {VAR} is not set'" in text.stdout
        lint = install.ways("sensors", "lint")
        assert f"uses ${{{VAR}}}, which is not set in this shell" in lint.stdout + lint.stderr
        assert "records are held" in lint.stdout + lint.stderr

        # idle but for its retries, the dispatcher exits owing them: the session's
        # pending marker restarts one at its next hook event
        assert wait_until(lambda: (install.state_root / "pending" / SID).exists(), timeout=90)
        assert wait_until(lambda: not dispatcher_alive(install))
        install.env[VAR] = "t0k3n"  # the next dispatcher runs where it is set
        s.hook("SessionEnd", reason="other")
        assert wait_until(lambda: any(b.get("section") == "session_end" for b in server.bodies))
    finally:
        server.close()
    seqs = [b["rule_seq"] for b in server.bodies]
    assert sorted(set(seqs)) == list(range(1, max(seqs) + 1))  # every record, none parked
    assert {h.get("x-token") for h in server.headers} == {"t0k3n"}
    assert not (install.state_root / "deadletters").exists() or not any(
        (install.state_root / "deadletters").iterdir()
    )
    [rule] = [r for r in status(install)["rules"] if r["rule"] == "remote/prompts"]
    assert rule["health"]["owed"] == 0 and rule["health"]["failing_since"] is None
