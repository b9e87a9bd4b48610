"""`ways sensors copy|rename|delete`."""

from __future__ import annotations

import json


def listing(install):
    return {
        s["name"]: s
        for s in json.loads(install.ways("sensors", "list", "--json").stdout)["sensors"]
    }


def test_copy_a_shipped_sensor_starts_disabled_and_gated(install):
    r = install.ways("sensors", "copy", "audit", "my-audit")
    assert r.returncode == 0, r.stderr
    s = listing(install)["my-audit"]
    assert s["layer"] == "user" and s["enabled"] is True
    assert [r["enabled"] for r in s["rules"]] == [False]
    assert s["rules"][0]["delivery"] == "at_least_once" and s["rules"][0]["chain"] is True
    text = (install.user_sensors / "my-audit.yaml").read_text()
    assert text.startswith("# copied from audit")
    r = install.ways("settings", "set", "ways.sensors.my-audit.rules.all.enabled", "true")
    assert r.returncode == 3
    assert install.ways("sensors", "copy", "audit", "my-audit").returncode == 3  # exists


def test_shipped_sensors_cannot_be_renamed_or_deleted(install):
    for args in (["rename", "audit", "x"], ["delete", "audit"]):
        r = install.ways("sensors", *args)
        assert r.returncode == 3 and "ways sensors copy audit" in r.stderr


def test_rename_and_delete_user_and_project_sensors(install, tmp_path):
    install.sensor(
        "mine",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    assert install.ways("sensors", "rename", "mine", "ours").returncode == 0
    names = listing(install)
    assert "ours" in names and "mine" not in names
    assert install.ways("sensors", "delete", "ours").returncode == 0
    assert "ours" not in listing(install)
    install.sensor(
        "p",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
        layer="project",
    )
    r = install.ways("sensors", "delete", "p", "--project", str(install.project))
    assert r.returncode == 0 and not (install.project_sensors / "p.yaml").exists()
    assert install.ways("sensors", "delete", "ghost").returncode == 2


def test_copy_rename_delete_report_their_results_as_json(install):
    r = install.ways("sensors", "copy", "audit", "mine", "--json")
    assert r.returncode == 0, r.stderr
    path = str(install.user_sensors / "mine.yaml")
    copied = json.loads(r.stdout)
    assert copied["source"] == "audit" and copied["source_layer"] == "shipped"
    assert (copied["name"], copied["path"], copied["rules"]) == ("mine", path, ["all"])
    r = install.ways("sensors", "rename", "mine", "ours", "--json")
    new = str(install.user_sensors / "ours.yaml")
    assert json.loads(r.stdout) == {"old": "mine", "new": "ours", "old_path": path, "path": new}
    r = install.ways("sensors", "delete", "ours", "--json")
    assert json.loads(r.stdout) == {"name": "ours", "path": new}
    assert sorted(p.name for p in install.user_sensors.iterdir()) == []


def test_rename_onto_a_taken_name_changes_nothing(install, tmp_path):
    for name in ("a", "b"):
        install.sensor(
            name,
            f"rules:\n  r:\n    sections: [tool_call]\n"
            f"    dispatch: {{file: {{path: '{tmp_path}/{name}'}}}}\n",
        )
    r = install.ways("sensors", "rename", "a", "b")
    assert r.returncode == 3 and "exists already" in r.stderr
    assert "path: '" + str(tmp_path / "b") in (install.user_sensors / "b.yaml").read_text()
    assert (install.user_sensors / "a.yaml").exists()


def test_a_mistyped_project_folder_is_refused_not_created(install, tmp_path):
    missing = tmp_path / "no-such-project"
    for args in (
        ["sensors", "copy", "audit", "x", "--project", str(missing)],
        ["settings", "set", "ways.sensors.audit.enabled", "true", "--project", str(missing)],
    ):
        r = install.ways(*args)
        assert r.returncode == 2 and "no project folder" in r.stderr, (args, r.stderr)
    assert not missing.exists()
