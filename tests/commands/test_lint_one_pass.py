"""One `ways sensors lint` run shows every error and every warning of every file (a
refused file's rules that are fine on their own still warn), and a config.yaml key
ways does not know makes `ways status` loud, as a refused sensor file does."""

from __future__ import annotations

import json

from ways_sensors.errors import INVALID, NOT_RECORDING

MULTI = """\
rules:
  typo:
    sections: [tool_call]
    timout: 5s
    dispatch: {file: {path: '/tmp/x/{sesion_id}.jsonl'}}
  remote:
    sections: [tool_call]
    where: {data.tool_nme: Bash}
    dispatch: {http: {url: 'https://example.com/in'}}
"""


def test_one_run_shows_the_errors_and_the_warnings_of_a_refused_file(install):
    install.sensor("multi", MULTI)
    install.sensor(
        "other", "rules:\n  r:\n    sections: [tool_cal]\n    dispatch: {file: {path: /tmp/o}}\n"
    )
    r = install.ways("sensors", "lint", "--json")
    assert r.returncode == INVALID, r.stderr
    got = json.loads(r.stdout)
    errors = {(e["sensor"], e["rule"], e["line"]) for e in got["errors"]}
    assert {("multi", "typo", 4), ("multi", "typo", 5), ("other", "r", 3)} <= errors
    warned = {(w["sensor"], w["rule"], w["line"]): w["message"] for w in got["warnings"]}
    assert "can never hold" in warned[("multi", "remote", 8)]
    assert "off this machine" in warned[("multi", "remote", 6)]
    text = install.ways("sensors", "lint")
    assert f"{len(got['errors'])} error(s), {len(got['warnings'])} warning(s)" in text.stdout
    assert "did you mean `data.tool_name`?" in text.stdout


def test_an_unknown_config_key_makes_status_loud(install):
    install.config("ways:\n  witnes: https://witness.example\n")
    r = install.ways("status")
    assert r.returncode == NOT_RECORDING, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    assert "unknown key `ways.witnes`" in first and "did you mean `ways.witness`?" in first
    data = json.loads(install.ways("status", "--json").stdout)
    [problem] = data["config_problems"]
    assert problem["line"] == 2 and "ways.witnes" in problem["message"]
    assert data["not_recording"] == [f"{problem['file']}:2 unknown key"]
    lint = install.ways("sensors", "lint")
    assert lint.returncode == INVALID and "unknown key `ways.witnes`" in lint.stdout


BROKEN_RULES = """\
rules:
  slow:
    sections: [tool_call]
    timeout: banana
    where: {data.tool_nme: Bash}
    dispatch: {http: {url: 'https://example.com/in'}}
  nowhere:
    sections: [tool_call]
    where: {data.input.comand: {matches: 'rm -rf'}, data.tool_name: {bogus: 1}}
    dispatch: {nosuch: {}}
    redact: none
"""


def test_a_rule_with_errors_of_its_own_still_shows_its_warnings(install, tmp_path):
    """A `where` path that can never hold is told beside the rule's own errors (a bad
    timeout; a bad operator and an unknown consumer), in the same run; a consumer that
    is itself wrong gives no consumer warnings (nothing would be sent to it)."""
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN_RULES)
    for argv in (("sensors", "lint", "--json"), ("sensors", "lint", "--json", str(path))):
        if len(argv) == 3:
            install.sensor("broken", BROKEN_RULES)
        r = install.ways(*argv)
        assert r.returncode == INVALID, r.stderr
        got = json.loads(r.stdout)
        errors = {(e["rule"], e["line"]) for e in got["errors"]}
        assert {("slow", 4), ("nowhere", 10)} <= errors, got["errors"]
        warned = {(w["rule"], w["line"]): w["message"] for w in got["warnings"]}
        assert "did you mean `data.tool_name`?" in warned[("slow", 5)], warned
        assert "off this machine" in warned[("slow", 2)]  # its consumer stands
        assert "can never hold" in warned[("nowhere", 9)], warned
        assert not [w for w in got["warnings"] if w["rule"] == "nowhere" and w["line"] != 9]
