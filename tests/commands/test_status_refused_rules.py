"""A rule whose sensor file is refused shows `refused` in `ways status`, not `gone`:
it still exists, and `ways sensors lint` says what is wrong with its file."""

from __future__ import annotations

import json

from ways_sensors.errors import NOT_RECORDING

from ..helpers import dispatcher_done, wait_until
from ..sessions import SID, ScriptedSession


def test_a_refused_files_counted_rules_show_refused(install, tmp_path):
    out = tmp_path / "out.jsonl"
    rule = f"rules:\n  r:\n    sections: [user_prompt]\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    path = install.sensor("mine", rule)
    ScriptedSession(install, tmp_path / "t").play()
    assert wait_until(lambda: dispatcher_done(install, SID), timeout=120)  # the script's
    assert out.exists()
    path.write_text(rule + "    timout: 5s\n")  # a typo: the whole file is refused
    r = install.ways("status", "--json")
    assert r.returncode == NOT_RECORDING, r.stderr
    data = json.loads(r.stdout)
    [mine] = [x for x in data["rules"] if x["rule"] == "mine/r"]
    assert mine["state"] == "refused" and mine["counters"]["delivered"] >= 1
    assert not any(w.endswith(" gone") for w in data["not_recording"])
    text = install.ways("status").stdout
    assert any(line.split()[:2] == ["mine/r", "refused"] for line in text.splitlines())
