"""Layers and trust, through the real `ways sensors list --json` command."""

from __future__ import annotations

import json

BASE = """\
spec: 1
kind: ways
description: base
rules:
  a:
    sections: [tool_call, tool_result]
    where: {data.tool_name: Bash, agent_type: main}
    dispatch: {file: {path: /tmp/a.jsonl}}
    timeout: 2s
  b:
    sections: [user_prompt]
    dispatch: {command: {argv: [logger, -t, x]}}
"""


def listing(install, *args):
    r = install.ways("sensors", "list", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def rules_of(data, sensor):
    s = next(s for s in data["sensors"] if s["name"] == sensor)
    return s, {r["name"]: r for r in s["rules"]}


def test_shipped_sensors_load_and_are_disabled(install):
    data = listing(install)
    names = {s["name"] for s in data["sensors"]}
    assert {"audit", "shell-commands", "risky-actions"} <= names
    for s in data["sensors"]:
        assert s["layer"] == "shipped"
        assert all(not r["enabled"] for r in s["rules"])


def test_user_layer_changes_only_the_fields_it_names(install):
    install.sensor("audit", "enabled: true\nrules:\n  all:\n    timeout: 1s\n")
    data = listing(install)
    s, rules = rules_of(data, "audit")
    assert s["enabled"] is True
    assert [f["layer"] for f in s["files"]] == ["shipped", "user"]
    assert rules["all"]["enabled"] is True
    assert rules["all"]["timeout"] == 1.0
    assert rules["all"]["delivery"] == "at_least_once"  # kept from shipped
    assert rules["all"]["chain"] is True
    assert len(rules["all"]["sections"]) == 13


def test_where_dispatch_and_lists_are_replaced_whole(install, tmp_path):
    install.sensor("base", BASE)
    install.config(f"ways:\n  project_sensors: [{install.project}]\n")
    install.sensor(
        "base",
        """\
        rules:
          a:
            sections: [tool_call]
            dispatch: {http: {url: "http://127.0.0.1:9/x"}}
          c:
            sections: [session_end]
            dispatch: {file: {path: /tmp/c.jsonl}}
        """,
        layer="project",
    )
    data = listing(install)
    s, rules = rules_of(data, "base")
    assert [f["layer"] for f in s["files"]] == ["user", "project"]
    assert rules["a"]["sections"] == ["tool_call"]
    assert rules["a"]["target"] == "http"
    assert rules["a"]["timeout"] == 2.0  # untouched scalar kept
    assert rules["b"]["target"] == "command"  # untouched rule kept
    assert rules["c"]["layer"] == "project"
    assert rules["a"]["layer"] == "project"
    assert rules["b"]["layer"] == "user"
    from ways_sensors.config.layers import merge

    merged = merge({"where": {"x": 1, "y": 2}, "k": {"a": 1}}, {"where": {"x": 3}, "k": {"b": 2}})
    assert merged == {"where": {"x": 3}, "k": {"a": 1, "b": 2}}


def test_enabled_false_turns_a_rule_off_in_a_higher_layer(install):
    install.sensor("base", BASE)
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    install.sensor("base", "rules:\n  b:\n    enabled: false\n", layer="project")
    _, rules = rules_of(listing(install), "base")
    assert rules["a"]["enabled"] and not rules["b"]["enabled"]


def test_project_sensor_is_refused_until_the_project_is_allowed(install):
    install.sensor("proj-only", BASE, layer="project")
    data = listing(install)
    assert "proj-only" not in {s["name"] for s in data["sensors"]}
    assert data["project_allowed"] is False
    assert [r["name"] for r in data["refused"]] == ["proj-only"]
    human = install.ways("sensors", "list")
    assert "refused" in human.stdout
    lint = install.ways("sensors", "lint")
    assert lint.returncode == 0
    assert "proj-only" in lint.stdout and "project sensor refused" in lint.stdout

    install.config(f"ways:\n  project_sensors:\n    - {install.project}\n")
    data = listing(install)
    assert "proj-only" in {s["name"] for s in data["sensors"]}
    assert data["refused"] == []


def test_a_project_file_cannot_allow_itself(install):
    # project_sensors is read from the user's config.yaml only; in a sensor file it is
    # an unknown field, and a project config.yaml is never read.
    install.sensor("sneaky", "ways:\n  project_sensors: ['/']\n" + BASE, layer="project")
    (install.project / ".claude" / "ways-sensors" / "config.yaml").write_text(
        f"ways:\n  project_sensors: ['{install.project}']\n"
    )
    data = listing(install)
    assert data["project_allowed"] is False
    assert {r["name"] for r in data["refused"]} == {"sneaky", "config"}


def test_a_broken_upper_layer_is_refused_alone_and_the_lower_one_stays(install):
    install.sensor("base", BASE)
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    install.sensor("base", "rules:\n  a:\n    timeout: forever\n", layer="project")
    data = listing(install)
    _, rules = rules_of(data, "base")
    assert rules["a"]["timeout"] == 2.0
    assert rules["a"]["layer"] == "user"
    [err] = data["errors"]
    assert err["layer"] == "project" and err["line"] == 3 and err["rule"] == "a"


def test_broken_config_yaml_is_reported_and_trusts_nothing(install):
    install.sensor("p", BASE, layer="project")
    install.config("ways: [unclosed\n")
    data = listing(install)
    assert data["project_allowed"] is False
    assert any("config.yaml" in e["file"] for e in data["errors"])
