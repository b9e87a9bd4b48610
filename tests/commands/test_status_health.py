"""`ways status`'s health through the real hook, the detached dispatcher and a real
loopback consumer: a consumer failing while records wait, and dead letters waiting,
each exit UNHEALTHY (8) naming the rule, its owed records, their age and the last
error, in text, `--json` and `--prometheus`; the dead-letter count and REJECTED agree
when checkpoints are parked with the records."""

from __future__ import annotations

import json

from ways_sensors.errors import UNHEALTHY

from ..helpers import counters_of, wait_until
from ..servers import Server
from ..sessions import ScriptedSession

OWED = 'ways_sensors_owed_records{sensor="remote",rule="prompts"} '


def rule(install, url: str, chain: bool = False) -> None:
    install.sensor(
        "remote",
        f"""\
        rules:
          prompts:
            sections: [user_prompt, tool_call, session_end]
            delivery: at_least_once
            chain: {"true" if chain else "false"}
            dispatch: {{http: {{url: '{url}'}}}}
        """,
    )


def status_json(install, *extra: str) -> tuple[int, dict]:
    r = install.ways("status", "--json", *extra)
    return r.returncode, json.loads(r.stdout)


def health_of(data: dict, rule: str = "remote/prompts") -> dict:
    return next(r["health"] for r in data["rules"] if r["rule"] == rule)


def test_a_consumer_failing_past_the_threshold_is_unhealthy_and_named(install, tmp_path):
    server = Server("script", script=[(503, {})] * 10_000)  # retried, never parked
    try:
        rule(install, server.url)
        ScriptedSession(install, tmp_path / "t").play()
        server.wait_for_attempts(2, timeout=60)
        # records wait, but for less than an hour: not yet unhealthy
        code, data = status_json(install, "--threshold", "3600")
        assert code == 0, data
        h = health_of(data)
        assert h["healthy"] and h["owed"] >= 3 and h["failing_since"] is not None
        assert h["last_error"].startswith("HTTP 503") and h["last_delivery"] is None
        assert data["unhealthy"] == []

        code, data = status_json(install, "--threshold", "0")
        assert code == UNHEALTHY
        h = health_of(data)
        assert data["unhealthy"] == ["remote/prompts"]
        assert h["problems"] == ["failing"] and h["owed"] >= 3
        assert h["oldest_owed_age_s"] is not None and h["oldest_owed_age_s"] >= 0
        assert h["dead_letters"] == 0

        text = install.ways("status", "--threshold", "0")
        assert text.returncode == UNHEALTHY
        line = next(x for x in text.stdout.splitlines() if x.startswith("UNHEALTHY"))
        assert "remote/prompts" in line and "record(s) owed, oldest" in line
        assert "HTTP 503" in line and "last delivery never" in line

        prom = install.ways("status", "--prometheus")
        assert prom.returncode == 0
        owed = [x for x in prom.stdout.splitlines() if x.startswith(OWED)]
        assert owed and int(owed[0].rsplit(" ", 1)[1]) >= 3
        assert any(
            x.startswith('ways_sensors_failing_since_timestamp_seconds{sensor="remote"')
            and float(x.rsplit(" ", 1)[1]) > 0
            for x in prom.stdout.splitlines()
        )

        server.script.clear()  # the consumer is back: everything owed goes, health clears
        assert wait_until(lambda: health_of(status_json(install)[1])["owed"] == 0, timeout=90)
        code, data = status_json(install, "--threshold", "0")
        assert code == 0, data
        h = health_of(data)
        assert h["healthy"] and h["failing_since"] is None and h["last_delivery"] is not None
    finally:
        server.close()


def test_dead_letters_waiting_are_unhealthy_and_agree_with_rejected(install, tmp_path):
    server = Server("script", script=[(400, {})] * 200)  # refused for good: parked
    try:
        rule(install, server.url, chain=True)
        ScriptedSession(install, tmp_path / "t").play()

        def parked() -> int:
            return sum(d["count"] for d in status_json(install)[1]["dead_letters"])

        assert wait_until(lambda: parked() >= 5, timeout=90)
        assert wait_until(lambda: health_of(status_json(install)[1])["owed"] == 0, timeout=90)
    finally:
        server.close()
    code, data = status_json(install)
    assert code == UNHEALTHY
    h = health_of(data)
    assert h["problems"] == ["dead_letters"]
    assert h["dead_letters"] == parked() == counters_of(install, "remote/prompts")["rejected"]
    lines = (install.state_root / "deadletters" / "remote.prompts.jsonl").read_text().splitlines()
    assert any(json.loads(x)["record"]["section"] == "checkpoint" for x in lines)
    text = install.ways("status")
    assert text.returncode == UNHEALTHY
    assert "dead letter(s) (`ways deadletters list remote/prompts`)" in text.stdout
