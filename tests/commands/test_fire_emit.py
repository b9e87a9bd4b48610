"""`ways sensors fire` through the real targets, and `ways sensors emit` into a session."""

from __future__ import annotations

import json

from ..conftest import payload
from ..servers import Server
from ..test_dispatcher import SID, lines, wait_until


def test_fire_against_a_hanging_consumer_reports_the_timeout(install):
    server = Server("hang")
    try:
        install.sensor(
            "remote",
            f"rules:\n  r:\n    sections: [tool_call]\n    timeout: 1500ms\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n",
        )
        r = install.ways("sensors", "fire", "remote/r", "--section", "tool_call", "--json")
        assert r.returncode == 1
        [res] = json.loads(r.stdout)
        assert res["status"] == "timeout" and res["timeout_s"] == 1.5
        assert 1500 <= res["duration_ms"] < 15000  # cut at the rule's timeout, not later
    finally:
        server.close()


def test_fire_delivers_a_masked_test_record_with_its_own_chain(install, tmp_path):
    out = tmp_path / "fired.jsonl"
    install.sensor(
        "audit", f"enabled: true\nrules:\n  all:\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    src = tmp_path / "in.json"
    src.write_text(
        json.dumps(
            {
                **payload("PreToolUse"),
                "tool_input": {
                    "command": "curl -H 'Authorization: Bearer Zq4vB7nK2mXc9LpQ1rSt5Uw' api"
                },
            }
        )
    )
    r = install.ways("sensors", "fire", "audit", "--section", "tool_call", "--input", str(src))
    assert r.returncode == 0 and "audit/all: delivered" in r.stdout
    [rec] = lines(out)
    assert rec["test"] is True and rec["session_id"] == "ways-fire"
    assert rec["chain"]["prev"] == "0" * 64
    assert "Zq4vB7nK2mXc9LpQ1rSt5Uw" not in json.dumps(rec)
    dry = install.ways("sensors", "fire", "audit/all", "--section", "session_end", "--dry-run")
    assert dry.returncode == 0 and json.loads(dry.stdout)["section"] == "session_end"
    assert len(lines(out)) == 1  # --dry-run sends nothing
    bad = install.ways("sensors", "fire", "audit", "--section", "nonsense")
    assert bad.returncode == 2


def test_emit_hands_a_way_event_to_the_session(install, tmp_path):
    out = tmp_path / "ways.jsonl"
    install.sensor(
        "w", f"rules:\n  r:\n    sections: [way_event]\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    event = {"kind": "fired", "way": "tests-first", "trigger": "Edit"}
    r = install.ways(
        "sensors", "emit", "--section", "way_event", "--session", SID, input=json.dumps(event)
    )
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: len(lines(out)) == 1)
    [rec] = lines(out)
    assert rec["section"] == "way_event" and rec["session_id"] == SID
    assert rec["data"] == event
    bad = install.ways(
        "sensors",
        "emit",
        "--section",
        "way_event",
        "--session",
        SID,
        input=json.dumps({"kind": "other"}),
    )
    assert bad.returncode == 3
