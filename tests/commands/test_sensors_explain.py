"""`ways sensors explain`: for every rule, whether a payload's record reaches it and why not."""

from __future__ import annotations

import json

from ..conftest import PAYLOADS, TRANSCRIPT

SENSOR = """\
rules:
  bash:
    sections: [tool_call]
    where: {data.tool_name: Bash}
    dispatch: {file: {path: /tmp/x.jsonl}}
  writes:
    sections: [tool_call]
    where: {data.tool_name: Write}
    dispatch: {file: {path: /tmp/x.jsonl}}
  rm:
    sections: [tool_call]
    where:
      data.tool_name: Bash
      data.input.command: {contains: "rm -rf"}
    dispatch: {file: {path: /tmp/x.jsonl}}
  prompts:
    sections: [user_prompt]
    dispatch: {file: {path: /tmp/x.jsonl}}
  dormant:
    enabled: false
    sections: [tool_call]
    dispatch: {file: {path: /tmp/x.jsonl}}
  missing:
    sections: [tool_call]
    where: {data.input.file_path: {like: "*.env"}}
    dispatch: {file: {path: /tmp/x.jsonl}}
"""


def test_explain_names_the_failing_condition_and_the_value_seen(install):
    install.sensor("team", SENSOR)
    install.sensor("broken", "rules:\n  a:\n    sections: [tool_cal]\n")
    r = install.ways("sensors", "explain", str(PAYLOADS / "PreToolUse.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "tool_call (PreToolUse)"

    def line_of(rule: str) -> str:
        hits = [ln for ln in lines if f" {rule} " in ln + " "]
        assert hits, (rule, r.stdout)
        return hits[0]

    assert line_of("team/bash").split()[0] == "receives"
    assert 'where data.tool_name: wants "Write", saw "Bash"' in line_of("team/writes")
    assert (
        'where data.input.command: wants contains "rm -rf", saw "echo hello-from-mock"'
        in line_of("team/rm")
    )
    assert "section tool_call not selected (selects user_prompt)" in line_of("team/prompts")
    assert line_of("team/dormant").split()[0] == "disabled"
    assert "where data.input.file_path: wants like" in line_of("team/missing")
    assert "saw no such field" in line_of("team/missing")
    assert line_of("broken").split()[0] == "refused"
    assert "file refused" in line_of("broken") and ":3:" in line_of("broken")

    # the same from stdin, as JSON
    payload = (PAYLOADS / "PreToolUse.json").read_text()
    r = install.ways("sensors", "explain", "-", "--json", input=payload)
    got = json.loads(r.stdout)
    verdicts = {v["rule"]: v for v in got[0]["verdicts"]}
    assert verdicts["team/bash"]["receives"] is True
    assert verdicts["team/writes"]["failed"] == [
        {"path": "data.tool_name", "wants": "Write", "seen": ["Bash"]}
    ]
    # nothing was dispatched
    assert not (install.state_root / "sessions").exists()


def test_explain_an_event_of_a_recorded_session(install):
    install.sensor("team", SENSOR)
    r = install.ways(
        "sensors", "explain", "--transcript", str(TRANSCRIPT), "--event", "1", "--json"
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got[0]["seq"] == 1 and got[0]["verdicts"]
    r = install.ways("sensors", "explain", "--transcript", str(TRANSCRIPT), "--event", "99999")
    assert r.returncode == 2 and "--event takes 1 to" in r.stderr


def test_explain_refuses_what_is_no_payload(install):
    r = install.ways("sensors", "explain", "-", input="[1, 2]")
    assert r.returncode == 2 and "one JSON object" in r.stderr
    r = install.ways("sensors", "explain", "-", input='{"hook_event_name": "Nope"}')
    assert r.returncode == 2 and "names no hook event" in r.stderr
