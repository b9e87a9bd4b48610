"""`ways sensors lint`: each broken file named with its line and problem, exit 3."""

from __future__ import annotations

import json

GOOD = """\
spec: 1
kind: ways
rules:
  ok:
    sections: [tool_call]
    dispatch: {file: {path: /tmp/ok.jsonl}}
"""

BROKEN = {
    "bad-yaml": ("rules:\n  a:\n    sections: [tool_call\n    dispatch: x\n", 4, "not valid YAML"),
    "unknown-field": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch: {file: {path: /tmp/x}}\n"
        "    colour: red\n",
        2,
        "unknown field `colour`",
    ),
    "wrong-type": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch: {file: {path: /tmp/x}}\n"
        "    queue_cap: lots\n",
        5,
        "Expected `int`",
    ),
    "bad-regex": (
        "rules:\n  a:\n    sections: [tool_call]\n    where:\n"
        "      data.input.command: {matches: 'rm (-rf'}\n"
        "    dispatch: {file: {path: /tmp/x}}\n",
        5,
        "invalid regular expression",
    ),
    "two-targets": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch:\n"
        "      file: {path: /tmp/x}\n      command: {argv: [cat]}\n",
        4,
        "exactly one",
    ),
    "unknown-section": (
        "rules:\n  a:\n    sections: [tool_call, tool_calls]\n"
        "    dispatch: {file: {path: /tmp/x}}\n",
        3,
        "Invalid enum value 'tool_calls'",
    ),
    "typo-operator": (
        "rules:\n  a:\n    sections: [tool_call]\n    where:\n"
        "      data.tool_name: {equal: Bash}\n"
        "    dispatch: {file: {path: /tmp/x}}\n",
        5,
        "did you mean 'equals'",
    ),
}


def write_broken(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.yaml").write_text(GOOD)
    for name, (text, _, _) in BROKEN.items():
        (folder / f"{name}.yaml").write_text(text)


def test_lint_names_file_line_and_problem_and_exits_3(install):
    write_broken(install.user_sensors)
    r = install.ways("sensors", "lint")
    assert r.returncode == 3, r.stdout + r.stderr
    for name, (_, line, message) in BROKEN.items():
        path = install.user_sensors / f"{name}.yaml"
        hits = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{path}:{line}: error")]
        assert hits, f"{name}: expected {path}:{line} in\n{r.stdout}"
        assert message in hits[0], hits[0]
    assert "valid sensors: audit, good, risky-actions, shell-commands" in r.stdout

    data = json.loads(install.ways("sensors", "lint", "--json").stdout)
    assert data["ok"] is False
    assert {e["sensor"] for e in data["errors"]} == set(BROKEN)
    assert "good" in data["sensors"]
    # the valid sensors still load for the hook and for list
    listed = json.loads(install.ways("sensors", "list", "--json").stdout)
    assert "good" in {s["name"] for s in listed["sensors"]}


def test_lint_paths_alone(install, tmp_path):
    folder = tmp_path / "elsewhere"
    write_broken(folder)
    r = install.ways("sensors", "lint", str(folder))
    assert r.returncode == 3
    assert "valid sensors: good" in r.stdout
    assert install.ways("sensors", "lint", str(folder / "good.yaml")).returncode == 0


def test_bad_file_name_is_an_error(install):
    install.user_sensors.mkdir(parents=True)
    (install.user_sensors / "Bad Name.yaml").write_text(GOOD)
    r = install.ways("sensors", "lint")
    assert r.returncode == 3 and "is not a sensor name" in r.stdout


def test_warnings_off_machine_unmasked_and_literal_secrets(install):
    install.sensor(
        "exports",
        """\
        rules:
          remote:
            sections: [tool_call]
            dispatch:
              http:
                url: https://collector.example.com/in
                headers: {Authorization: "Bearer abcdefghijklmnop1234", X-Key: "${API_KEY}"}
          local-http:
            sections: [tool_call]
            dispatch: {http: {url: "http://127.0.0.1:8080/in"}}
          cmd:
            sections: [tool_call]
            redact: none
            dispatch: {command: {argv: [nc, example.com, "9"]}}
        """,
    )
    r = install.ways("sensors", "lint", "--json")
    assert r.returncode == 0, r.stdout
    warnings = json.loads(r.stdout)["warnings"]
    by_rule: dict[str, list[str]] = {}
    for w in warnings:
        by_rule.setdefault(w["rule"], []).append(w["message"])
    assert any("off this machine" in m and "collector.example.com" in m for m in by_rule["remote"])
    assert any("'Authorization' holds a literal secret" in m for m in by_rule["remote"])
    assert not any("X-Key" in m for m in by_rule["remote"])
    assert "local-http" not in by_rule
    assert any(
        "redact: none dispatches unmasked session content to command nc" in m
        for m in by_rule["cmd"]
    )
    assert any("command" in m and "off this machine" in m for m in by_rule["cmd"])
    listed = json.loads(install.ways("sensors", "list", "--json").stdout)
    rules = {r["name"]: r for s in listed["sensors"] for r in s["rules"]}
    assert rules["remote"]["off_machine"] and rules["cmd"]["off_machine"]
    assert not rules["local-http"]["off_machine"]
