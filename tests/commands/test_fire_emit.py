"""`ways sensors fire` through the real targets, and `ways sensors emit` into a session."""

from __future__ import annotations

import json

from ways_sensors.errors import NOT_DELIVERED

from ..conftest import payload
from ..helpers import SID, lines, wait_until
from ..servers import Server


def test_fire_against_a_hanging_consumer_reports_the_timeout(install):
    server = Server("hang")
    try:
        install.sensor(
            "remote",
            f"rules:\n  r:\n    sections: [tool_call]\n    timeout: 1500ms\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n",
        )
        r = install.ways("sensors", "fire", "remote/r", "--section", "tool_call", "--json")
        assert r.returncode == NOT_DELIVERED
        [res] = json.loads(r.stdout)
        assert (res["result"], res["outcome"], res["cause"]) == (
            "timed out",
            "retryable",
            "timeout",
        )
        assert res["timeout_s"] == 1.5
        assert 1500 <= res["duration_ms"] < 15000  # cut at the rule's timeout, not later
    finally:
        server.close()


def test_fire_tells_permanent_from_retryable_and_parks_nothing(install, tmp_path):
    server = Server("script", script=[(400, {}), (429, {"Retry-After": "3"})])
    try:
        install.sensor(
            "remote",
            f"rules:\n  r:\n    sections: [tool_call]\n    delivery: at_least_once\n"
            f"    dispatch: {{http: {{url: '{server.url}'}}}}\n",
        )
        fire = ("sensors", "fire", "remote/r", "--section", "tool_call")
        r = install.ways(*fire)
        assert r.returncode == NOT_DELIVERED
        assert "remote/r: refused (HTTP 400, permanent)" in r.stdout, r.stdout
        [res] = json.loads(install.ways(*fire, "--json").stdout)
        assert (res["outcome"], res["cause"], res["detail"]) == ("retryable", "refused", "HTTP 429")
        assert res["retry_after"] == 3
        [res] = json.loads(install.ways(*fire, "--json").stdout)
        assert res["outcome"] == "accepted" and res["cause"] is None
        assert len(server.attempts) == 3
        # a fire is a test: no dead letter, nothing in the rule's totals
        assert not (install.state_root / "deadletters").exists()
        assert not (install.state_root / "counters").exists()
        log = (install.state_root / "events.log").read_text()
        assert '"kind":"fire.refused"' in log and '"outcome":"permanent"' in log
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
    assert rec["test"] is True and rec["session_id"].startswith("ways-fire-")
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


def test_fire_never_leaves_a_chained_file_that_fails_verify(install, tmp_path):
    """Fired twice into the rule's real chained file (shared, and per session), the
    file still verifies: each fire is a session of its own, chained from rule_seq 1."""
    shared = tmp_path / "shared.jsonl"
    per = tmp_path / "per"
    install.sensor(
        "audit",
        "enabled: true\nrules:\n"
        f"  all:\n    dispatch: {{file: {{path: '{shared}'}}}}\n    chain: true\n"
        f"  each:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{per}/{{session_id}}.jsonl'}}}}\n    chain: true\n",
    )
    for _ in range(2):
        r = install.ways("sensors", "fire", "audit", "--section", "tool_call")
        assert r.returncode == 0, r.stdout
    assert len(lines(shared)) == 2 and len(list(per.glob("*.jsonl"))) == 2
    for target in (str(shared), str(per)):
        v = install.ways("sensors", "verify", target)
        assert v.returncode == 0, v.stdout
    v = install.ways("sensors", "verify", str(shared), "--rule", "audit/all")
    assert v.returncode == 0, v.stdout


def test_fire_says_where_is_not_applied_and_skips_disabled_rules(install, tmp_path):
    out = tmp_path / "fired.jsonl"
    install.sensor(
        "probe",
        "enabled: true\nrules:\n"
        f"  picky:\n    sections: [tool_call]\n    where: {{data.tool_name: Nothing}}\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
        f"  dormant:\n    sections: [tool_call]\n    enabled: false\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    r = install.ways("sensors", "fire", "probe", "--section", "tool_call")
    assert r.returncode == 0, r.stdout
    assert "probe/picky: delivered" in r.stdout and "`where` is not applied" in r.stdout
    assert "probe/dormant: skipped (disabled)" in r.stdout
    assert len(lines(out)) == 1
    [res] = json.loads(
        install.ways("sensors", "fire", "probe", "--section", "tool_call", "--json").stdout
    )
    assert (res["rule"], res["where_applied"], res["has_where"]) == ("probe/picky", False, True)
    only_off = install.ways("sensors", "fire", "probe/dormant", "--section", "tool_call")
    assert only_off.returncode == 2 and "--include-disabled" in only_off.stderr
    asked = install.ways(
        "sensors", "fire", "probe/dormant", "--section", "tool_call", "--include-disabled"
    )
    assert asked.returncode == 0 and "probe/dormant: delivered" in asked.stdout
