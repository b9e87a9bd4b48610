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
