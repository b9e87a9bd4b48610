"""The sensors tab says what `ways status` says: a HELD column (records taken into a
trace span still open, counted held, not delivered) and a HEALTH column with the
footer's UNHEALTHY lines (dead letters waiting), from the counters and dead-letter
files real dispatchers wrote while a scripted session ran through the real hook."""

from __future__ import annotations

from ..helpers import counters_of, dispatcher_done, status, wait_until
from ..servers import Server
from ..sessions import SID, ScriptedSession
from ..traces.receive import rule as traces_rule
from .conftest import cell, drive, main_screen


def test_held_records_show_in_their_own_column_not_as_delivered(tab, tmp_path):
    server = Server("otlp-traces")
    try:
        traces_rule(tab, server, batch="    batch: {max_records: 1}\n")  # an attempt a record
        ScriptedSession(tab, tmp_path / "t").play()
        assert wait_until(lambda: dispatcher_done(tab, SID), timeout=120)
    finally:
        server.close()
    c = counters_of(tab, "tr/spans")
    assert c["held"] >= 2
    seen = {}

    async def scenario(pilot):
        seen["rule"] = {k: cell(pilot, "r:tr/spans", k) for k in ("held", "delivered")}
        seen["sensor"] = cell(pilot, "s:tr", "held")
        seen["health"] = cell(pilot, "r:tr/spans", "health")

    drive(scenario)
    assert seen["rule"] == {"held": str(c["held"]), "delivered": str(c["delivered"])}
    assert seen["sensor"] == str(c["held"])  # a sensor's counts are its rules' sums
    assert seen["health"] == "ok"


def test_dead_letters_make_the_rule_unhealthy_in_the_tab_as_in_status(tab, tmp_path):
    server = Server("script", script=[(400, {})] * 1000)  # refused for good: parked
    try:
        tab.sensor(
            "rem",
            "rules:\n  r:\n    sections: [tool_call]\n    delivery: at_least_once\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n",
        )
        ScriptedSession(tab, tmp_path / "t").play()
        assert wait_until(lambda: dispatcher_done(tab, SID), timeout=120)
    finally:
        server.close()
    [st] = [r for r in status(tab)["rules"] if r["rule"] == "rem/r"]
    dead = st["health"]["dead_letters"]
    assert dead >= 1 and st["health"]["problems"] == ["dead_letters"]
    seen = {}

    async def scenario(pilot):
        seen["rule"] = cell(pilot, "r:rem/r", "health")
        seen["sensor"] = cell(pilot, "s:rem", "health")
        seen["other"] = cell(pilot, "r:audit/all", "health")
        seen["footer"] = str(main_screen(pilot).query_one("#live").render())

    drive(scenario)
    assert (seen["rule"], seen["sensor"]) == ("dead letters", "unhealthy")
    assert seen["other"] == "ok"
    [line] = [x for x in seen["footer"].splitlines() if x.startswith("UNHEALTHY rem/r: ")]
    assert f"{dead} dead letter(s)" in line and "last error 'HTTP 400'" in line
