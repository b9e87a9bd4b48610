"""A locked rule of the managed layer ($XDG_CONFIG_DIRS) against every user-side way to
change it: user and project files, `ways settings`, `ways sensors copy/rename/delete`,
the tab. Each is refused or left out with the managed file named, and the real hook
still records through the locked rule."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ..conftest import payload
from ..helpers import lines, wait_until

CORP = """\
description: the company's record of shell calls
rules:
  audit:
    locked: true
    sections: [tool_call]
    dispatch: {{file: {{path: "{out}"}}}}
  extra:
    sections: [user_prompt]
    dispatch: {{file: {{path: "{out}.extra"}}}}
"""


@pytest.fixture
def corp(install, tmp_path):
    """The managed file, and where its locked rule writes."""
    out = tmp_path / "corp.jsonl"
    folder = tmp_path / "xdg" / "agent-ways" / "sensors"
    folder.mkdir(parents=True)
    path = folder / "corp.yaml"
    path.write_text(CORP.format(out=out))
    install.env["XDG_CONFIG_DIRS"] = str(tmp_path / "xdg")
    return path, out


def records_through_the_hook(install, out: Path) -> list[dict]:
    r = install.hook(payload("PreToolUse"))
    assert r.returncode == 0 and r.stdout == b""
    assert wait_until(lambda: out.exists() and out.read_text().strip(), timeout=30)
    return lines(out)


def listed(install) -> dict:
    data = json.loads(install.ways("sensors", "list", "--json").stdout)
    return {s["name"]: s for s in data["sensors"]}


def test_list_shows_the_managed_layer_and_the_hook_records(install, corp):
    path, out = corp
    sensor = listed(install)["corp"]
    assert sensor["layer"] == "managed" and sensor["file"] == str(path)
    assert {r["name"]: r["layer"] for r in sensor["rules"]} == {
        "audit": "managed",
        "extra": "managed",
    }
    assert records_through_the_hook(install, out)[0]["rule"] == "audit"


USER_OVERRIDE = """\
enabled: false
rules:
  audit:
    enabled: false
    locked: false
    dispatch: {{file: {{path: "{elsewhere}"}}}}
  extra:
    timeout: 3s
"""


@pytest.mark.parametrize("layer", ["user", "project"])
def test_a_user_or_project_file_cannot_disable_edit_or_shadow_it(install, corp, tmp_path, layer):
    path, out = corp
    elsewhere = tmp_path / "elsewhere.jsonl"
    if layer == "project":
        install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    mine = install.sensor("corp", USER_OVERRIDE.format(elsewhere=elsewhere), layer=layer)
    sensor = listed(install)["corp"]
    audit = next(r for r in sensor["rules"] if r["name"] == "audit")
    assert audit["enabled"] and audit["layer"] == "managed"
    assert audit["destination"] == f"file {out}"
    extra = next(r for r in sensor["rules"] if r["name"] == "extra")
    assert extra["timeout"] in ("3s", 3.0, 3)  # the unlocked rule takes the change
    lint = json.loads(install.ways("sensors", "lint", "--json").stdout)
    said = [p for p in lint["warnings"] if p["file"] == str(mine)]
    assert {(p["rule"], p["line"]) for p in said} == {(None, 1), ("audit", 3)}
    assert all(str(path) in p["message"] for p in said)
    assert records_through_the_hook(install, out)[0]["rule"] == "audit"
    assert not elsewhere.exists()


def test_a_locked_sensor_ignores_the_whole_user_file(install, corp, tmp_path):
    path, _ = corp
    path.write_text(path.read_text().replace("description:", "locked: true\ndescription:"))
    install.sensor("corp", "description: mine\nrules:\n  extra:\n    enabled: false\n")
    sensor = listed(install)["corp"]
    assert sensor["description"] == "the company's record of shell calls"
    assert all(r["enabled"] for r in sensor["rules"])


@pytest.mark.parametrize(
    "argv",
    [
        ["settings", "set", "ways.sensors.corp.rules.audit.enabled", "false"],
        ["settings", "set", "ways.sensors.corp.rules.audit.timeout", "1s"],
        ["settings", "set", "ways.sensors.corp.enabled", "false"],
        ["settings", "unset", "ways.sensors.corp.rules.audit.dispatch"],
        ["sensors", "delete", "corp"],
        ["sensors", "rename", "corp", "mine"],
        ["sensors", "copy", "audit", "corp"],
    ],
)
def test_every_command_refuses_naming_the_managed_file(install, corp, argv):
    path, _ = corp
    r = install.ways(*argv)
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert str(path) in r.stderr and "locked" in r.stderr
    assert not install.user_sensors.exists() or not list(install.user_sensors.iterdir())


def test_a_project_layer_write_is_refused_too(install, corp):
    path, _ = corp
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    key = "ways.sensors.corp.rules.audit.enabled"
    r = install.ways("settings", "set", key, "false", "--project", str(install.project))
    assert r.returncode == 3 and str(path) in r.stderr
    assert not install.project_sensors.exists()


def test_what_is_not_locked_stays_the_users(install, corp):
    r = install.ways("settings", "set", "ways.sensors.corp.rules.extra.timeout", "3s")
    assert r.returncode == 0, r.stderr
    assert install.ways("sensors", "copy", "corp", "mine").returncode == 0
    got = install.ways("settings", "get", "ways.sensors.corp.rules.audit.sections", "--json")
    assert json.loads(got.stdout)["layer"] == "managed"


def test_locked_in_a_user_file_is_said_to_mean_nothing(install):
    mine = install.sensor(
        "mine",
        textwrap.dedent(
            """\
            rules:
              r:
                locked: true
                sections: [tool_call]
                dispatch: {file: {path: /tmp/x.jsonl}}
            """
        ),
    )
    lint = json.loads(install.ways("sensors", "lint", "--json").stdout)
    [p] = [p for p in lint["warnings"] if p["file"] == str(mine)]
    assert p["severity"] == "warning" and "managed layer only" in p["message"]
    assert p["line"] == 3


def test_the_tab_cannot_switch_it_off(install, corp, monkeypatch):
    from ..tui.conftest import cell, drive, message, point_at, select

    path, _ = corp
    point_at(install, monkeypatch)  # the tab runs in this process, as the user's
    seen = {}

    async def scenario(pilot):
        await select(pilot, "r:corp/audit")
        await pilot.press("space")
        seen["message"] = message(pilot)
        seen["state"] = cell(pilot, "r:corp/audit", "state")
        await select(pilot, "s:corp")
        await pilot.press("space")
        seen["sensor"] = message(pilot)

    drive(scenario)
    assert str(path) in seen["message"] and "locked" in seen["message"]
    assert seen["state"] == "on"
    assert str(path) in seen["sensor"]
    assert not (install.user_sensors / "corp.yaml").exists()


def test_the_hook_sees_a_managed_file_added_later(install, corp, tmp_path):
    """The hook's index key stats the managed folders: a file the administrator adds
    is acted on at the next event, like a user's."""
    path, out = corp
    path.rename(tmp_path / "aside.yaml")
    assert install.hook(payload("PreToolUse")).returncode == 0  # builds the index: no rule
    (tmp_path / "aside.yaml").rename(path)
    assert records_through_the_hook(install, out)[0]["rule"] == "audit"
