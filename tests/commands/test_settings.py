"""`ways settings` through the real command: exact edits, layers, every exit code."""

from __future__ import annotations

import json
import os

from ..conftest import TRANSCRIPT

HAND_WRITTEN = """\
# Our team's export sensor. Keep the comments!
spec: 1
kind: ways
description: "Tool calls to the team collector"   # shown in `ways sensors list`
enabled: true

rules:
  # every tool call, to a local log first
  calls:
    sections: [tool_call, tool_result]   # both halves
    where:
      data.tool_name: {in: [Bash, Edit]}
    dispatch:
      file: {path: '/tmp/team/calls.jsonl', format: json}
    timeout: 2s      # generous
    delivery: at_least_once

  # flagged shell commands
  risky:
    sections:
      - tool_call
    dispatch:
      command:
        argv: [logger, -t, agent-risk]
    timeout: 500ms
"""


def get(install, key, *extra):
    r = install.ways("settings", "get", key, "--json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_set_changes_exactly_the_targeted_line(install):
    path = install.sensor("team", HAND_WRITTEN)
    cases = [
        ("ways.sensors.team.rules.calls.timeout", "3s", "    timeout: 3s      # generous"),
        ("ways.sensors.team.rules.risky.timeout", "750ms", "    timeout: 750ms"),
        (
            "ways.sensors.team.description",
            "Tool calls, all of them",
            'description: "Tool calls, all of them"   # shown in `ways sensors list`',
        ),
        (
            "ways.sensors.team.rules.calls.dispatch.file.path",
            "/tmp/team/all.jsonl",
            "      file: {path: '/tmp/team/all.jsonl', format: json}",
        ),
        ("ways.sensors.team.rules.calls.delivery", "best_effort", "    delivery: best_effort"),
        ("ways.sensors.team.enabled", "false", "enabled: false"),
    ]
    for key, value, expected_line in cases:
        before = path.read_text().splitlines()
        r = install.ways("settings", "set", key, value)
        assert r.returncode == 0, r.stderr
        after = path.read_text().splitlines()
        assert len(before) == len(after), key
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert len(changed) == 1, (key, changed)
        assert after[changed[0]] == expected_line
    assert get(install, "ways.sensors.team.rules.calls.timeout")["value"] == "3s"


def test_get_names_value_layer_default_and_file(install):
    data = get(install, "ways.sensors.audit.rules.all.chain")
    assert data["value"] is True and data["layer"] == "shipped" and data["default"] is False
    assert data["file"].endswith("sensors/audit.yaml")
    assert get(install, "ways.sensors.audit.rules.all.queue_cap")["layer"] == "default"
    assert (
        install.ways("settings", "get", "ways.sensors.audit.rules.all.delivery").stdout
        == "at_least_once\n"
    )


def test_set_on_a_shipped_sensor_creates_a_user_file_with_only_that_field(install):
    r = install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "1s")
    assert r.returncode == 0, r.stderr
    path = install.user_sensors / "audit.yaml"
    assert path.read_text() == "rules:\n  all:\n    timeout: 1s\n"
    data = get(install, "ways.sensors.audit.rules.all.timeout")
    assert (data["value"], data["layer"], data["file"]) == ("1s", "user", str(path))
    assert (path.stat().st_mode & 0o777) == 0o600


def test_exit_2_unknown_key_or_sensor(install):
    for args in (
        ["get", "ways.sensors.audit.rules.all.colour"],
        ["get", "nope"],
        ["get", "ways.sensors.ghost.enabled"],
        ["set", "ways.x", "1"],
        ["help", "ways.sensors.audit.rules.all.dispatch.ftp.url"],
    ):
        r = install.ways("settings", *args)
        assert r.returncode == 2, args
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("ways: ")


def test_exit_3_value_rejected_and_nothing_written(install):
    path = install.sensor("team", HAND_WRITTEN)
    before = path.read_bytes()
    for key, value in (
        ("ways.sensors.team.rules.calls.timeout", "forever"),
        ("ways.sensors.team.rules.calls.sections", "[tool_calls]"),
        ("ways.sensors.team.rules.calls.mode", "sometimes"),
        ("ways.sensors.team.rules.calls.where.data.x", "{matches: '('}"),
    ):
        r = install.ways("settings", "set", key, value)
        assert r.returncode == 3, (key, r.stderr)
        assert "ways settings help" in r.stderr
    assert path.read_bytes() == before


def test_exit_4_when_a_project_layer_overrides(install):
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    install.sensor("audit", "rules:\n  all:\n    timeout: 9s\n", layer="project")
    r = install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "2s")
    assert r.returncode == 4, r.stderr
    assert "project layer" in r.stderr and "9s" in r.stderr
    assert (install.user_sensors / "audit.yaml").read_text().endswith("timeout: 2s\n")
    r = install.ways(
        "settings",
        "set",
        "ways.sensors.audit.rules.all.timeout",
        "3s",
        "--project",
        str(install.project),
    )
    assert r.returncode == 0
    assert get(install, "ways.sensors.audit.rules.all.timeout")["value"] == "3s"


def test_exit_5_read_only_file(install):
    path = install.sensor("team", HAND_WRITTEN)
    os.chmod(path, 0o444)
    r = install.ways("settings", "set", "ways.sensors.team.rules.calls.timeout", "3s")
    assert r.returncode == 5, r.stderr
    assert "read-only" in r.stderr
    assert path.read_text() == HAND_WRITTEN


def test_new_rules_start_disabled_until_previewed(install, tmp_path):
    rule = f"{{sections: [tool_call], dispatch: {{file: {{path: '{tmp_path}/o.jsonl'}}}}}}"
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r", rule)
    assert r.returncode == 0, r.stderr
    assert get(install, "ways.sensors.mine.rules.r.enabled")["value"] is False
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r.enabled", "true")
    assert r.returncode == 3 and "ways sensors test mine/r" in r.stderr
    t = install.ways("sensors", "test", "mine/r", "--transcript", str(TRANSCRIPT))
    assert t.returncode == 0, t.stderr
    assert (
        install.ways("settings", "set", "ways.sensors.mine.rules.r.enabled", "true").returncode == 0
    )
    # hand-written rules are never gated
    install.sensor(
        "hand",
        f"rules:\n  h:\n    enabled: false\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/h'}}}}\n",
    )
    assert (
        install.ways("settings", "set", "ways.sensors.hand.rules.h.enabled", "true").returncode == 0
    )


def test_unset_help_and_list(install):
    install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "1s")
    install.ways("settings", "set", "ways.sensors.audit.enabled", "true")
    r = install.ways("settings", "unset", "ways.sensors.audit.rules.all.timeout")
    assert r.returncode == 0
    assert (install.user_sensors / "audit.yaml").read_text() == "enabled: true\n"
    assert get(install, "ways.sensors.audit.rules.all.timeout")["layer"] == "default"
    h = json.loads(
        install.ways("settings", "help", "ways.sensors.audit.rules.all.delivery", "--json").stdout
    )
    assert h["default"] == "best_effort" and "best_effort" in h["type"] and h["help"]
    rows = json.loads(install.ways("settings", "list", "--json").stdout)
    keys = {row["key"]: row for row in rows}
    assert keys["ways.sensors.audit.enabled"]["layer"] == "user"
    assert "ways.sensors.risky-actions.rules.shell.where.data.input.command" in keys
    assert "ways.sensors.audit.rules.all.dispatch.file.path" in keys


def test_project_sensors_key(install):
    r = install.ways("settings", "set", "ways.project_sensors", str(install.project))
    assert r.returncode == 0
    assert get(install, "ways.project_sensors")["value"] == [str(install.project)]
    r = install.ways(
        "settings", "set", "ways.project_sensors", "/x", "--project", str(install.project)
    )
    assert r.returncode == 2  # a project cannot allow itself
    listed = json.loads(install.ways("sensors", "list", "--json").stdout)
    assert listed["project_allowed"] is True


def test_set_and_unset_report_their_results_as_json(install, tmp_path):
    r = install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "1s", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "key": "ways.sensors.audit.rules.all.timeout",
        "value": "1s",
        "file": str(install.user_sensors / "audit.yaml"),
        "created_rule": None,
        "overridden": None,
    }
    rule = f"{{sections: [tool_call], dispatch: {{file: {{path: '{tmp_path}/o'}}}}}}"
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r", rule, "--json")
    done = json.loads(r.stdout)
    assert done["created_rule"] == "mine/r" and done["value"]["enabled"] is False
    # written, but the project layer decides: the result says so, and the exit code is 4
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    install.sensor("audit", "rules:\n  all:\n    timeout: 9s\n", layer="project")
    r = install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "2s", "--json")
    assert r.returncode == 4
    assert "project layer" in json.loads(r.stdout)["overridden"]
    assert len(r.stderr.splitlines()) == 1 and "9s" in r.stderr
    for removed in (True, False):
        r = install.ways("settings", "unset", "ways.sensors.audit.rules.all.timeout", "--json")
        assert r.returncode == 0
        assert json.loads(r.stdout) == {
            "key": "ways.sensors.audit.rules.all.timeout",
            "layer": "user",
            "file": str(install.user_sensors / "audit.yaml"),
            "removed": removed,
        }


def test_a_sensor_file_that_is_not_yaml_is_left_untouched(install):
    path = install.sensor("team", "rules: [unclosed\n")
    r = install.ways("settings", "set", "ways.sensors.team.description", "x")
    assert r.returncode == 3 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "not valid YAML" in r.stderr and "Traceback" not in r.stderr
    assert path.read_text() == "rules: [unclosed\n"


def test_an_empty_project_folder_is_refused_never_turned_into_a_path(install):
    """`ways.project_sensors ''` would trust the working folder: exit 3, nothing written."""
    for value in ("", "   ", "[]", "['']", "[/x, ' ']", "~", "{a: b}", "[3]"):
        r = install.ways("settings", "set", "ways.project_sensors", value)
        assert r.returncode == (0 if value == "[]" else 3), (value, r.stderr)
        if value != "[]":
            assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("ways: "), value
    assert get(install, "ways.project_sensors")["value"] == []
    # a hand-written value that is not a list: refused with the way out, not a crash
    install.config("ways:\n  project_sensors: 5\n")
    r = install.ways("settings", "set", "ways.project_sensors", str(install.project))
    assert r.returncode == 3 and "set the whole list" in r.stderr, r.stderr
    assert (install.config_root / "config.yaml").read_text() == "ways:\n  project_sensors: 5\n"


def _waiting_rule(install, tmp_path, sensor_extra=""):
    """mine/r created by `ways settings set`: disabled, its preview never seen."""
    if sensor_extra:
        install.sensor("mine", sensor_extra)
    rule = f"{{sections: [tool_call], dispatch: {{file: {{path: '{tmp_path}/o.jsonl'}}}}}}"
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r", rule)
    assert r.returncode == 0, r.stderr
    return rule


def _refused(install, r, path):
    """The gate's one line, and the rule still off as the hook would load it."""
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and "`ways sensors test mine/r`" in r.stderr, r.stderr
    listed = json.loads(install.ways("sensors", "list", "--json").stdout)
    [mine] = [s for s in listed["sensors"] if s["name"] == "mine"]
    [rule] = [x for x in mine["rules"] if x["name"] == "r"]
    assert not (mine["enabled"] and rule["enabled"]), listed


def test_no_side_door_enables_a_rule_whose_preview_was_never_seen(install, tmp_path):
    """Unsetting `enabled` (default true), setting the whole rule with or without
    `enabled: true`, at the user or the project layer, and switching the sensor on
    under a rule switched on by hand: each would end with the unseen rule enabled."""
    rule = _waiting_rule(install, tmp_path)
    path = install.user_sensors / "mine.yaml"
    before = path.read_bytes()
    whole_on = rule[:-1] + ", enabled: true}"
    attempts = [
        ("unset", "ways.sensors.mine.rules.r.enabled"),
        ("set", "ways.sensors.mine.rules.r", whole_on),
        ("set", "ways.sensors.mine.rules.r", rule),  # the whole rule, `enabled` left out
        ("set", "ways.sensors.mine.rules.r.enabled", "yes"),  # YAML's other spelling
    ]
    for args in attempts:
        _refused(install, install.ways("settings", *args), path)
        assert path.read_bytes() == before, args
    # the project layer merges over the user's: `r: {enabled: true}` there would win
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    proj = ["--project", str(install.project)]
    for args in (
        ("set", "ways.sensors.mine.rules.r", "{enabled: true}", *proj),
        ("set", "ways.sensors.mine.rules.r.enabled", "true", *proj),
    ):
        _refused(install, install.ways("settings", *args), path)
        assert not (install.project_sensors / "mine.yaml").exists(), args
    # a change that leaves the rule off still goes through
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r.timeout", "2s")
    assert r.returncode == 0, r.stderr
    r = install.ways("settings", "set", "ways.sensors.mine.description", "x")
    assert r.returncode == 0, r.stderr


def test_switching_the_sensor_on_is_a_side_door_too(install, tmp_path):
    """Sensor off and the unseen rule's own flag on (a hand edit): switching the sensor
    on, by set or by unset (its default is true), is refused the same way."""
    _waiting_rule(install, tmp_path, sensor_extra="enabled: false\n")
    path = install.user_sensors / "mine.yaml"
    # the command refuses to turn the rule's flag on, even under a sensor that is off
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r.enabled", "true")
    _refused(install, r, path)
    head, rules = path.read_text().split("rules:")
    assert "enabled: false" in head and "enabled: false" in rules
    path.write_text(head + "rules:" + rules.replace("enabled: false", "enabled: true"))
    before = path.read_bytes()
    for args in (
        ("set", "ways.sensors.mine.enabled", "true"),
        ("unset", "ways.sensors.mine.enabled"),
    ):
        _refused(install, install.ways("settings", *args), path)
        assert path.read_bytes() == before, args


def test_once_previewed_every_door_opens(install, tmp_path):
    rule = _waiting_rule(install, tmp_path)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    t = install.ways("sensors", "test", "mine/r", "--transcript", str(transcript))
    assert t.returncode == 0, t.stderr
    r = install.ways("settings", "unset", "ways.sensors.mine.rules.r.enabled")
    assert r.returncode == 0, r.stderr
    assert get(install, "ways.sensors.mine.rules.r.enabled")["value"] is True
    r = install.ways("settings", "set", "ways.sensors.mine.rules.r", rule)
    assert r.returncode == 0, r.stderr


def test_a_copied_sensor_cannot_be_enabled_through_a_side_door(install, tmp_path):
    install.sensor(
        "src",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    r = install.ways("sensors", "copy", "src", "mine")
    assert r.returncode == 0, r.stderr
    path = install.user_sensors / "mine.yaml"
    target = f"{{file: {{path: '{tmp_path}/o'}}}}"
    whole = f"{{sections: [tool_call], enabled: true, dispatch: {target}}}"
    for args in (
        ("unset", "ways.sensors.mine.rules.r.enabled"),
        ("set", "ways.sensors.mine.rules.r", whole),
    ):
        _refused(install, install.ways("settings", *args), path)


def test_the_kept_listing_follows_every_change_of_its_files(install, tmp_path):
    """`settings list` answers from the listing kept by its last run (listcache.py) only
    while no sensor file, folder or config.yaml changed: an edit by hand, a new file, a
    removed one, config.yaml, each shows at once, as a full resolution would say."""

    def listed() -> dict:
        r = install.ways("settings", "list", "--json")
        assert r.returncode == 0, r.stderr
        return {row["key"]: row for row in json.loads(r.stdout)}

    kept = install.root / "cache" / "agent-ways" / "settings"
    first = listed()
    [path] = kept.iterdir()
    assert path.stat().st_mode & 0o777 == 0o600 and kept.stat().st_mode & 0o777 == 0o700
    assert listed() == first  # from the kept listing
    key = "ways.sensors.audit.rules.all.timeout"
    mine = install.user_sensors / "audit.yaml"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("rules:\n  all:\n    timeout: 3s\n")  # by hand, not through ways
    assert (listed()[key]["value"], listed()[key]["layer"]) == ("3s", "user")
    extra = install.user_sensors / "extra.yaml"
    extra.write_text("rules:\n  r:\n    sections: [tool_call]\n    dispatch: {file: {path: /x}}\n")
    assert "ways.sensors.extra.rules.r.sections" in listed()
    extra.unlink()
    assert "ways.sensors.extra.rules.r.sections" not in listed()
    install.config("ways:\n  retention:\n    abandoned_after: 2d\n")
    assert listed()["ways.retention.abandoned_after"]["value"] == "2d"
    # a kept listing under another key (another version's, a copied cache) is never used
    path.write_text(json.dumps({"key": "v 0.0.0", "rows": [{"key": "planted"}]}))
    assert "planted" not in listed()
    path.write_text("not json")
    assert key in listed()


def test_dispatch_idle_seconds_is_a_known_key_with_one_default(install):
    """The key the dispatcher reads (commands/dispatch.py) is one `settings` knows, with
    the dispatcher's own default."""
    from ways_sensors.dispatch.dispatcher import IDLE

    r = install.ways("settings", "get", "ways.dispatch_idle_seconds", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["value"] == IDLE and got["layer"] == "default"
    assert install.ways("settings", "set", "ways.dispatch_idle_seconds", "30").returncode == 0
    got = json.loads(install.ways("settings", "get", "ways.dispatch_idle_seconds", "--json").stdout)
    assert got["value"] == 30 and got["layer"] == "user"
    r = install.ways("settings", "set", "ways.dispatch_idle_seconds", "soon")
    assert r.returncode == 3 and "seconds from 1 to 86400" in r.stderr
    listed = install.ways("settings", "list").stdout
    assert "ways.dispatch_idle_seconds" in listed


def test_a_kept_listing_is_printed_without_the_layers_machinery(install):
    """The second `settings list` of unchanged files loads no YAML parser, no spec, no
    msgspec (their imports are most of a cold run: bench/commands_bench.py)."""

    code = (
        "import sys, contextlib, io\n"
        "from ways_sensors.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['settings', 'list'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    heavy = {"yaml", "msgspec", "ways_sensors.config.spec", "ways_sensors.config.layers"}
    loaded = []
    for _ in ("cold", "kept"):
        r = install.python(code)
        assert r.returncode == 0, r.stderr
        loaded.append(set(r.stdout.split()))
    assert heavy <= loaded[0] and not heavy & loaded[1]
