"""Hostile sensor files and config.yaml (issue 11, defect 2), through the real hook,
dispatcher and `ways sensors lint|list`.

An alias bomb (nine levels of `b: &b [*a, *a, ...]`, about 300 bytes) stands for 9^9
values; walking it hung lint, and hung every hook, since the index was rebuilt inside
the hook and never written. Every wait here is bounded by a subprocess or polling
timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
from itertools import pairwise
from pathlib import Path

import pytest

from .conftest import PAYLOADS, payload
from .helpers import dispatcher_lock, entries, lines, modules_on_path, wait_until


def alias_bomb(levels: int = 9) -> str:
    names = "abcdefghij"[:levels]
    out = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in pairwise(names):
        out.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(out) + "\n"


def other_sensor(install, out: Path) -> None:
    install.sensor(
        "other",
        f"rules:\n  r:\n    sections: [tool_call]\n    dispatch: {{file: {{path: '{out}'}}}}\n",
    )


def events_of(install) -> list[dict]:
    log = install.state_root / "events.log"
    if not log.exists():
        return []
    return [json.loads(x) for x in log.read_text().splitlines()]


def test_an_alias_bomb_is_refused_by_the_hook_and_the_other_sensor_delivers(install, tmp_path):
    out = tmp_path / "other.jsonl"
    other_sensor(install, out)
    bomb = install.sensor("bomb", alias_bomb())
    assert len(bomb.read_bytes()) < 512
    for _ in range(3):  # the first hook rebuilds the index, the others read it
        r = install.hook(payload("PreToolUse"), timeout=20)  # hung for good before
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(lines(out)) == 3, timeout=20)
    assert [x["rule"] for x in lines(out)] == ["r"] * 3
    # the index was written once, with the bomb refused: no hook rebuilds it again
    [idx] = (install.root / "cache").rglob("*.idx")
    sensors = {r["sensor"] for r in json.loads(idx.read_text().partition("\nrules\n")[2])["rules"]}
    assert "other" in sensors and "bomb" not in sensors
    assert not list((install.root / "cache").rglob("*.bad"))


def test_lint_and_list_refuse_the_bomb_alone(install, tmp_path):
    other_sensor(install, tmp_path / "o.jsonl")
    bomb = install.sensor("bomb", alias_bomb())
    r = install.ways("sensors", "lint", timeout=20)
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"{bomb}:2: error: alias *a refused: aliases are not allowed" in r.stdout
    assert "other" in r.stdout.rpartition("valid sensors:")[2]

    r = install.ways("sensors", "list", "--json", timeout=20)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert "other" in {s["name"] for s in data["sensors"]}
    assert "bomb" not in {s["name"] for s in data["sensors"]}
    [err] = data["errors"]
    assert (err["file"], err["line"], err["layer"]) == (str(bomb), 2, "user")


def test_a_bomb_in_config_yaml_is_refused_and_trusts_nothing(install, tmp_path):
    install.sensor("p", "rules: {}\n", layer="project")
    install.config(alias_bomb() + f"ways:\n  project_sensors: ['{install.project}']\n")
    r = install.ways("sensors", "list", "--json", timeout=20)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["project_allowed"] is False
    [err] = [e for e in data["errors"] if e["file"].endswith("config.yaml")]
    assert err["line"] == 2 and "alias *a refused" in err["message"]


def test_a_merge_key_is_an_alias_too(install, tmp_path):
    path = install.sensor(
        "merge",
        f"""\
        defaults: &d {{sections: [tool_call], dispatch: {{file: {{path: '{tmp_path}/m'}}}}}}
        rules:
          r:
            <<: *d
        """,
    )
    r = install.ways("sensors", "lint", "--json", str(path), timeout=20)
    assert r.returncode == 3
    [err] = json.loads(r.stdout)["errors"]
    assert err["line"] == 4 and "alias *d refused" in err["message"]


@pytest.mark.parametrize(
    "make, line, message",
    [
        (lambda p: os.mkfifo(p), 1, "not a regular file"),  # opening it used to block
        (lambda p: p.symlink_to("/dev/zero"), 1, "not a regular file"),
        (lambda p: p.write_text("a: " + "x" * (1 << 20) + "\n"), 1, "larger than 1048576"),
        (lambda p: p.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n"), 1, "nested deeper"),
        (lambda p: p.write_text("spec: 1\nwhen: 2001-13-45\n"), 2, "cannot read this value"),
        (lambda p: p.write_text("spec: 1\nn: " + "7" * 5000 + "\n"), 2, "cannot read this"),
    ],
    ids=["fifo", "device", "huge", "deep", "bad-date", "huge-int"],
)
def test_other_hostile_files_are_refused_alone(install, tmp_path, make, line, message):
    other_sensor(install, tmp_path / "o.jsonl")
    install.user_sensors.mkdir(parents=True, exist_ok=True)
    path = install.user_sensors / "hostile.yaml"
    make(path)
    r = install.ways("sensors", "lint", "--json", timeout=20)
    assert r.returncode == 3, r.stdout + r.stderr
    data = json.loads(r.stdout)
    [err] = data["errors"]
    assert (err["file"], err["line"]) == (str(path), line)
    assert message in err["message"]
    assert "other" in data["sensors"]
    r = install.hook(payload("PreToolUse"), timeout=20)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(lines(tmp_path / "o.jsonl")) == 1, timeout=20)


# --- the hook's rebuild budget ----------------------------------------------------------

# Makes the index build slow in the hook's process only (the build's site.main() imports
# it; the dispatcher, started with other arguments, is left alone): a build the loader's
# bounds do not foresee.
SLOW_SITE = """\
import sys, time
if sys.argv[1:] == ["hook", "sensors"]:
    time.sleep(120)
"""


def slow_build(install, tmp_path) -> None:
    site = tmp_path / "slow-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_SITE)
    install.env["PYTHONPATH"] = str(site)


def test_a_rebuild_over_budget_never_hangs_the_hook_and_loses_nothing(install, tmp_path):
    out = tmp_path / "other.jsonl"
    other_sensor(install, out)
    slow_build(install, tmp_path)
    with dispatcher_lock(install):  # keep the spool as the hooks leave it
        for _ in range(3):
            r = install.hook(payload("PreToolUse"), timeout=20)  # hung for good before
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        # the first hook waited out the budget, the others skipped the known-bad key;
        # all three spooled their event for the dispatcher to judge
        assert len(entries(install)) == 3
    kinds = [e["kind"] for e in events_of(install)]
    assert kinds == ["index.build_over_budget", "index.build_skipped", "index.build_skipped"]
    [bad] = (install.root / "cache").rglob("*.bad")
    assert bad.stat().st_mode & 0o777 == 0o600
    assert not list((install.root / "cache").rglob("*.tmp"))
    # the dispatcher builds the index without a budget and delivers everything
    del install.env["PYTHONPATH"]
    r = install.hook(payload("PreToolUse"), timeout=20)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(lines(out)) == 4, timeout=30)
    assert [x["seq"] for x in lines(out)] == [1, 2, 3, 4]


def test_a_rebuild_in_the_hook_leaves_its_process_lean(install, tmp_path):
    """The rebuild runs in a forked child: the hook itself never imports the loader."""
    other_sensor(install, tmp_path / "o.jsonl")
    with dispatcher_lock(install):
        mods = modules_on_path(install, tmp_path, (PAYLOADS / "PreToolUse.json").read_bytes())
        assert len(entries(install)) == 1  # the index was built and the event spooled
    assert not ({"yaml", "msgspec", "re2", "re", "json", "site"} & mods)
    assert list((install.root / "cache").rglob("*.idx"))
    assert "ways_sensors.config.layers" not in mods


def test_settings_set_refuses_a_bomb_instead_of_expanding_it(install):
    """ruamel would load the bomb and the settings code expand it: the bounded loader
    reads the file first, so the write is refused (exit 3) and the file left as it was."""
    bomb = install.sensor("bomb", alias_bomb())
    before = bomb.read_bytes()
    r = install.ways("settings", "set", "ways.sensors.bomb.enabled", "false", timeout=20)
    assert r.returncode == 3, r.stderr
    assert "alias" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2
    assert bomb.read_bytes() == before
