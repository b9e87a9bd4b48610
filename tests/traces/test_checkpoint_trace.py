"""A signed checkpoint's OTLP log record is in the trace the session joined, as every
other record of the session is (#36: it carried the derived trace id instead)."""

from __future__ import annotations

from ..conftest import ALL_SECTIONS
from ..helpers import dispatcher_done, wait_until
from ..servers import Server
from ..sessions import SID, ScriptedSession

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def log_records(logs: Server) -> list[dict]:
    return [
        rec
        for body in logs.bodies
        for rl in body["resourceLogs"]
        for sl in rl["scopeLogs"]
        for rec in sl["logRecords"]
    ]


def ended(logs: Server) -> bool:
    return any(r["eventName"] == "ways.sensor.session_end" for r in log_records(logs))


def test_checkpoint_log_records_carry_the_joined_trace(install, tmp_path):
    logs = Server("otlp")
    try:
        install.sensor(
            "joined",
            "rules:\n  logs:\n"
            f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
            "    delivery: at_least_once\n    chain: true\n"
            f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{logs.port}'}}}}\n",
        )
        install.env["TRACEPARENT"] = f"00-{TRACE}-00f067aa0ba902b7-01"  # every hook's
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: ended(logs), timeout=120)
        assert wait_until(lambda: dispatcher_done(install, SID), timeout=120)
    finally:
        logs.close()
    records = log_records(logs)
    checkpoints = [r for r in records if r["eventName"] == "ways.sensor.checkpoint"]
    assert checkpoints and len(records) > len(checkpoints), [r["eventName"] for r in records]
    assert {r["traceId"] for r in records} == {TRACE}
