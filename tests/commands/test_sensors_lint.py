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
        5,
        "unknown field `colour`",
    ),
    "wrong-type": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch: {file: {path: /tmp/x}}\n"
        "    queue_cap: lots\n",
        5,
        "expected a whole number, got text",
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
        "`tool_calls` is not a section: use one of user_prompt",
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
        hits = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{path}:{line}:")]
        hits = [ln for ln in hits if ": error: " in ln]
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
    assert not any("X-Key" in m and "literal secret" in m for m in by_rule["remote"])
    # ${API_KEY} is unset in the linting shell: said, as a warning (exit stays 0)
    assert any("'X-Key' uses ${API_KEY}, which is not set" in m for m in by_rule["remote"])
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


THREE = """\
rules:
  a:
    section: [tool_call]
    sections: [tool_call]
    timeout: 5 sec
    mode: sync
    dispatch: {file: {path: /tmp/x}}
"""


def test_three_mistakes_three_errors_each_at_its_line_with_a_suggestion(install, tmp_path):
    path = tmp_path / "three.yaml"
    path.write_text(THREE)
    r = install.ways("sensors", "lint", str(path))
    assert r.returncode == 3
    errors = [ln for ln in r.stdout.splitlines() if ": error: " in ln]
    assert len(errors) == 3, r.stdout
    assert errors[0].startswith(f"{path}:3:5: error: ")
    assert "unknown field `section`: did you mean `sections`?" in errors[0]
    assert errors[1].startswith(f"{path}:5:14: error: ")
    assert "`5 sec` is not a duration like 500ms, 5s or 2m" in errors[1]
    assert errors[2].startswith(f"{path}:6:11: error: ")
    assert "`sync` is not a valid mode: use one of async, blocking" in errors[2]
    data = json.loads(install.ways("sensors", "lint", "--json", str(path)).stdout)
    assert [(e["line"], e["column"]) for e in data["errors"]] == [(3, 5), (5, 14), (6, 11)]


MISPLACED = {
    # dispatch one level too far out: at the rules level, a "rule" named dispatch
    "out": (
        "rules:\n  a:\n    sections: [tool_call]\n  dispatch:\n    file: {path: /tmp/x}\n",
        4,
        "`dispatch` is a rule field indented one level too little",
    ),
    # the target beside dispatch instead of under it
    "beside": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch:\n    file: {path: /tmp/x}\n",
        5,
        "`file` is a target, so it belongs one level further in, under `dispatch:`",
    ),
    # a rule field under dispatch
    "under": (
        "rules:\n  a:\n    sections: [tool_call]\n    dispatch:\n"
        "      file: {path: /tmp/x}\n      mode: async\n",
        6,
        "`mode` is a rule field indented one level too far",
    ),
}


def test_a_misindented_dispatch_says_so(install, tmp_path):
    for name, (text, line, message) in MISPLACED.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        r = install.ways("sensors", "lint", str(path))
        assert r.returncode == 3, r.stdout
        hits = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{path}:{line}:")]
        assert hits and message in hits[0], (name, r.stdout)


# every kind of spec mistake a person can make, none answered in validator language
NO_VALIDATOR_TEXT = [
    "timeout: 5 sec",
    "timeout: true",
    "timeout: 9999",
    "queue_cap: 0",
    "queue_cap: lots",
    "mode: sync",
    "delivery: once",
    "match: some",
    "chain: maybe",
    "redact: all",
    "fields: meta",
    "fields: {include: [], colour: 1}",
    "batch: {max_delay: soon}",
    "batch: {max_records: 0}",
    "batch: {}",
    "enabled: 3",
    "sections: tool_call",
    "sections: []",
    "where: [a]",
    "where: {data.tool_name: {equal: Bash}}",
]


def test_no_message_holds_a_regular_expression_or_validator_text(install, tmp_path):
    files = []
    for i, line in enumerate(NO_VALIDATOR_TEXT):
        path = tmp_path / f"case-{i}.yaml"
        path.write_text(
            f"rules:\n  a:\n    sections: [tool_call]\n    dispatch: {{file: {{path: /tmp/x}}}}\n"
            f"    {line}\n"
        )
        files.append(path)
    for extra in (
        "dispatch: {http: {url: 'ftp://x'}}",
        "dispatch: {http: {url: 'http://x', format: xml}}",
        "dispatch: {file: {path: relative}}",
        "dispatch: {fil: {path: /tmp/x}}",
    ):
        path = tmp_path / f"case-{len(files)}.yaml"
        path.write_text(f"rules:\n  a:\n    sections: [tool_call]\n    {extra}\n")
        files.append(path)
    r = install.ways("sensors", "lint", "--json", *map(str, files))
    errors = json.loads(r.stdout)["errors"]
    assert {e["file"] for e in errors} == {str(p) for p in files}, r.stdout
    for e in errors:
        for raw in ("Expected `", "regex", "^", "\\s", "\\d", "Invalid enum", "Object "):
            assert raw not in e["message"], e
    # `ways settings set` speaks the same words
    r = install.ways("settings", "set", "ways.sensors.audit.rules.all.timeout", "5 sec")
    assert r.returncode != 0
    assert "a duration like 500ms, 5s or 2m" in r.stderr and "regex" not in r.stderr


def test_placeholders_variables_where_paths_and_config_keys(install, tmp_path):
    path = tmp_path / "checks.yaml"
    path.write_text(
        "rules:\n"
        "  a:\n"
        "    sections: [tool_call]\n"
        "    where:\n"
        "      data.input.comand: {contains: rm}\n"
        "      data.tool_name: Bash\n"
        "      data.extra.anything: 1\n"
        "    dispatch:\n"
        "      http:\n"
        "        url: http://127.0.0.1:9/in\n"
        "        headers: {X-Token: '${WAYS_TEST_SURELY_UNSET}'}\n"
    )
    r = install.ways("sensors", "lint", "--json", str(path))
    assert r.returncode == 0, r.stdout
    warnings = [(w["line"], w["message"]) for w in json.loads(r.stdout)["warnings"]]
    assert any(
        line == 11 and "${WAYS_TEST_SURELY_UNSET}, which is not set" in m for line, m in warnings
    ), warnings
    assert any(
        line == 5 and "data.input.comand" in m and "did you mean `data.input.command`" in m
        for line, m in warnings
    ), warnings
    assert not any("data.tool_name" in m or "data.extra" in m for _, m in warnings), warnings

    placeholder = tmp_path / "placeholder.yaml"
    placeholder.write_text(
        "rules:\n  a:\n    sections: [tool_call]\n"
        "    dispatch: {file: {path: '/tmp/{sesion_id}.jsonl'}}\n"
    )
    r = install.ways("sensors", "lint", str(placeholder))
    assert r.returncode == 3
    assert "unknown placeholder {sesion_id}: did you mean {session_id}?" in r.stdout

    install.config("ways:\n  project_sensor: [/tmp]\n  dispatch_idle_seconds: 30\n")
    r = install.ways("sensors", "lint")
    assert r.returncode == 3, r.stdout
    assert (
        "unknown key `ways.project_sensor` in config.yaml: did you mean `ways.project_sensors`?"
        in (r.stdout)
    )
    assert "dispatch_idle_seconds" not in r.stdout  # a known key


def test_lint_checks_the_witness_and_the_epoch_length(install):
    """A bad witness URL or key, or `epoch_seconds: 1h`, turned the witness off or the
    epoch length to its default without a word from lint."""
    install.config(
        "ways:\n  witness:\n    url: ftp://witness.example\n    key: nokey\n"
        "  evidence:\n    epoch_seconds: 1h\n"
    )
    r = install.ways("sensors", "lint")
    assert r.returncode == 3, r.stdout
    assert "ways.witness: url must be http:// or https://" in r.stdout
    assert "ways.evidence.epoch_seconds: a positive number of seconds, not '1h'" in r.stdout
    install.config("ways:\n  witness: [{url: 'http://127.0.0.1:9', key: 'x+1+AA'}]\n")
    r = install.ways("sensors", "lint")
    assert r.returncode == 3 and "ways.witness[0]: key:" in r.stdout
    install.config("ways:\n  evidence:\n    epoch_seconds: 600\n")
    assert install.ways("sensors", "lint").returncode == 0


def test_check_targets_connects_runs_nothing_and_sends_nothing(install, tmp_path):
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    try:
        path = tmp_path / "targets.yaml"
        path.write_text(
            "rules:\n"
            f"  file-ok:\n    sections: [tool_call]\n"
            f"    dispatch: {{file: {{path: '{tmp_path}/new/{{session_id}}.jsonl'}}}}\n"
            f"  file-bad:\n    sections: [tool_call]\n"
            f"    dispatch: {{file: {{path: '{blocker}/x/{{date}}.jsonl'}}}}\n"
            "  cmd-ok:\n    sections: [tool_call]\n    dispatch: {command: {argv: [cat]}}\n"
            "  cmd-bad:\n    sections: [tool_call]\n"
            "    dispatch: {command: {argv: [no-such-program-here]}}\n"
            "  http-ok:\n    sections: [tool_call]\n"
            f"    dispatch: {{http: {{url: 'http://127.0.0.1:{server.getsockname()[1]}/in'}}}}\n"
            "  otlp-bad:\n    sections: [tool_call]\n"
            f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{closed.getsockname()[1]}'}}}}\n"
        )
        assert install.ways("sensors", "lint", str(path)).returncode == 0  # off by default
        r = install.ways("sensors", "lint", "--check-targets", "--json", str(path))
        assert r.returncode == 3, r.stdout
        bad = {e["rule"]: e["message"] for e in json.loads(r.stdout)["errors"]}
        assert set(bad) == {"file-bad", "cmd-bad", "otlp-bad"}, bad
        assert "is not a folder" in bad["file-bad"]
        assert "not an executable" in bad["cmd-bad"]
        assert "does not accept a connection" in bad["otlp-bad"]
        assert not (tmp_path / "new").exists()  # nothing created
        server.settimeout(5)
        conn, _ = server.accept()  # the check connected ...
        conn.settimeout(5)
        assert conn.recv(1) == b""  # ... and sent nothing
        conn.close()
    finally:
        server.close()
        closed.close()


def test_input_args_is_warned_about_the_process_list_and_its_length(install):
    """Issue 22, defect 9: records passed as arguments are readable by every local user
    while the command runs, and one over 128 KiB cannot be passed at all."""
    install.sensor(
        "argv",
        """\
        rules:
          args:
            sections: [tool_call]
            dispatch: {command: {argv: [logger], input: args}}
          stdin:
            sections: [tool_call]
            dispatch: {command: {argv: [logger]}}
        """,
    )
    r = install.ways("sensors", "lint", "--json")
    assert r.returncode == 0, r.stdout
    by_rule: dict[str, list[dict]] = {}
    for w in json.loads(r.stdout)["warnings"]:
        by_rule.setdefault(w["rule"], []).append(w)
    [warning] = [w for w in by_rule["args"] if "input: args" in w["message"]]
    assert "/proc/<pid>/cmdline" in warning["message"] and "128 KiB" in warning["message"]
    assert warning["line"] == 4
    assert not any("input: args" in w["message"] for w in by_rule.get("stdin", []))
