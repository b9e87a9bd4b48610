"""The managed layer's config.yaml through the real commands: its settings sit below
the user's, and a key it locks can be neither changed nor unset, the refusal naming it."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def managed(install, tmp_path):
    folder = tmp_path / "xdg" / "agent-ways"
    folder.mkdir(parents=True)
    install.env["XDG_CONFIG_DIRS"] = str(tmp_path / "xdg")
    return folder / "config.yaml"


def get(install, key: str) -> dict:
    r = install.ways("settings", "get", key, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_locked_key_is_the_administrators(install, managed):
    managed.write_text("locked: [ways.dispatch_idle_seconds]\nways:\n  dispatch_idle_seconds: 7\n")
    install.config("ways:\n  dispatch_idle_seconds: 30\n")
    got = get(install, "ways.dispatch_idle_seconds")
    assert (got["value"], got["layer"], got["file"]) == (7, "managed", str(managed))
    for argv in (
        ("set", "ways.dispatch_idle_seconds", "20"),
        ("unset", "ways.dispatch_idle_seconds"),
    ):
        r = install.ways("settings", *argv)
        assert r.returncode == 3 and str(managed) in r.stderr and "locked" in r.stderr
    assert "30" in (install.config_root / "config.yaml").read_text()  # never rewritten


def test_an_unlocked_managed_key_is_a_default_the_user_overrides(install, managed):
    managed.write_text("ways:\n  dispatch_idle_seconds: 7\n")
    got = get(install, "ways.dispatch_idle_seconds")
    assert (got["value"], got["layer"]) == (7, "managed")
    assert install.ways("settings", "set", "ways.dispatch_idle_seconds", "20").returncode == 0
    got = get(install, "ways.dispatch_idle_seconds")
    assert (got["value"], got["layer"]) == (20, "user")


def test_a_locked_project_list_keeps_project_sensors_out(install, managed):
    """The user lists the project; the administrator locks the list empty: the project's
    sensors stay refused."""
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    install.sensor(
        "proj",
        "rules:\n  r:\n    sections: [tool_call]\n    dispatch: {file: {path: /tmp/p.jsonl}}\n",
        layer="project",
    )
    names = {
        s["name"] for s in json.loads(install.ways("sensors", "list", "--json").stdout)["sensors"]
    }
    assert "proj" in names
    managed.write_text("locked: [ways.project_sensors]\nways:\n  project_sensors: []\n")
    listing = json.loads(install.ways("sensors", "list", "--json").stdout)
    assert "proj" not in {s["name"] for s in listing["sensors"]}
    assert [r["name"] for r in listing["refused"]] == ["proj"]
