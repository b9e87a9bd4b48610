"""A catastrophic `matches` pattern on model-controlled text (issue 11, defect 1).

`^(\\w+\\s?)+$` against 40 word characters and a `!` takes a backtracking engine 2^40
steps; Python's `re` would hold the interpreter lock for minutes, stopping every rule
of the dispatcher. `matches` runs on RE2, so the same evaluation is linear. Each test
bounds its wait by a subprocess or a polling timeout, so a regression fails instead of
hanging the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from .conftest import payload
from .helpers import lines, wait_until

SID = "5c1e7a2b-3f4d-4e8a-9b6c-0d2f1a3b4c5d"
CATASTROPHIC = r"^(\w+\s?)+$"
HOSTILE = "a" * 40 + "!"  # 41 characters: no match, after 2^40 steps of backtracking


def tool_call(command: str) -> dict:
    p = payload("PreToolUse")
    return {**p, "tool_input": {**p["tool_input"], "command": command}}


def test_the_catastrophic_pattern_is_evaluated_at_once():
    script = f"""
import json, sys
from ways_sensors.config.conditions import compile_where
where = compile_where({{"data.input.command": {{"matches": {CATASTROPHIC!r}}}}})
cases = [{HOSTILE!r}, {HOSTILE!r} * 50_000, "ls la tmp", "\\ud83d" + {HOSTILE!r}]
print(json.dumps([where({{"data": {{"input": {{"command": c}}}}}}) for c in cases]))
"""
    # a backtracking engine would run for minutes: the hard timeout turns that into a
    # failure (subprocess.TimeoutExpired) instead of a hung suite
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [False, False, True, False]


def test_another_rule_delivers_through_the_real_dispatcher(install, tmp_path):
    guarded, other = tmp_path / "guarded.jsonl", tmp_path / "other.jsonl"
    install.sensor(
        "hostile",
        f"""\
        rules:
          guarded:
            sections: [tool_call]
            where: {{data.input.command: {{matches: '{CATASTROPHIC}'}}}}
            dispatch: {{file: {{path: '{guarded}'}}}}
          other:
            sections: [tool_call]
            dispatch: {{file: {{path: '{other}'}}}}
        """,
    )
    for command in (HOSTILE, "ls la tmp", HOSTILE):
        r = install.hook(tool_call(command))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    # the dispatcher would be stuck in the first evaluation for minutes
    assert wait_until(lambda: len(lines(other)) == 3, timeout=20)
    assert [x["data"]["input"]["command"] for x in lines(other)] == [
        HOSTILE,
        "ls la tmp",
        HOSTILE,
    ]
    assert wait_until(lambda: len(lines(guarded)) == 1, timeout=20)
    assert lines(guarded)[0]["data"]["input"]["command"] == "ls la tmp"


def test_a_blocking_rule_with_the_pattern_returns_and_the_other_delivers(install, tmp_path):
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        f"""\
        rules:
          guarded:
            sections: [tool_call]
            mode: blocking
            timeout: 1s
            where: {{data.input.command: {{matches: '{CATASTROPHIC}'}}}}
            dispatch: {{file: {{path: '{out}'}}}}
          other:
            sections: [tool_call]
            mode: blocking
            timeout: 10s
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    # `other` may take the whole cap: a loaded machine's hook start (and its index
    # build) must not decide this test; the pattern's rule still has its 1 s
    # the hook ran past 25 s before: the subprocess timeout makes that a failure
    r = install.hook(tool_call(HOSTILE), timeout=20)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert [x["rule"] for x in lines(out)] == ["other"]


def test_lint_refuses_what_re2_cannot_run_and_other_sensors_still_list(install, tmp_path):
    install.sensor(
        "fine",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    where: {{data.input.command: {{matches: '^git '}}}}\n"
        f"    dispatch: {{file: {{path: '{tmp_path / 'f.jsonl'}'}}}}\n",
    )
    path = install.sensor(
        "clever",
        f"""\
        rules:
          ahead:
            sections: [tool_call]
            where:
              data.input.command: {{matches: 'rm (?!-i)'}}
            dispatch: {{file: {{path: '{tmp_path / "c.jsonl"}'}}}}
          twice:
            sections: [tool_call]
            where:
              data.input.command: {{matches: '(\\w+) \\1'}}
            dispatch: {{file: {{path: '{tmp_path / "c.jsonl"}'}}}}
        """,
    )
    r = install.ways("sensors", "lint")
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"{path}:5:27: error: clever/ahead: " in r.stdout  # line and column
    assert "negative look-ahead (?!...) is not supported" in r.stdout
    assert "valid sensors:" in r.stdout and "fine" in r.stdout.rpartition("valid sensors:")[2]
    assert "RE2" in r.stdout and r.stderr == ""

    # the file is refused alone, with every bad rule; lint of the file names them too
    r = install.ways("sensors", "lint", "--json", str(path))
    assert r.returncode == 3
    errs = json.loads(r.stdout)["errors"]
    got = [(e["file"], e["line"], e["rule"]) for e in errs]
    assert got == [(str(path), 5, "ahead"), (str(path), 10, "twice")]

    install.sensor(
        "clever",
        "rules:\n  twice:\n    sections: [tool_call]\n"
        "    where: {data.input.command: {matches: '(\\w+) \\1'}}\n"
        f"    dispatch: {{file: {{path: '{tmp_path / 'c.jsonl'}'}}}}\n",
    )
    r = install.ways("sensors", "list", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert "fine" in {s["name"] for s in data["sensors"]}
    assert "clever" not in {s["name"] for s in data["sensors"]}
    [err] = data["errors"]
    assert err["line"] == 4 and err["rule"] == "twice"
    assert "backreference \\1 is not supported" in err["message"]


def test_blocking_where_is_evaluated_only_inside_the_cap(install, tmp_path, monkeypatch):
    """The blocking path as the hook runs it, entered after the 10 s cap has passed:
    no `where` is evaluated, and the skipped rules are logged, not dropped silently."""
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        f"rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    where: {{data.input.command: {{matches: '{CATASTROPHIC}'}}}}\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    for k, v in install.env.items():
        monkeypatch.setenv(k, v)
    from ways_sensors.dispatch import blocking

    data = json.dumps(tool_call("ls la tmp")).encode()
    late = time.monotonic() - 10.5
    blocking.run(SID, "PreToolUse", time.time_ns(), str(install.project), data, ["tool_call"])
    assert len(lines(out)) == 1  # in time, the rule matches and delivers
    blocking.run(SID, "PreToolUse", time.time_ns(), str(install.project), data, ["tool_call"], late)
    assert len(lines(out)) == 1
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    assert [(e["kind"], e["unevaluated"]) for e in log] == [("blocking.deadline", 1)]
