"""A typo in an installed sensor file is loud: one content-free events.log line per
refusal (per change of the file, not per event), `ways status` names the file first and
exits NOT_RECORDING, --json and the Prometheus textfile say it too. Real hook, real
dispatcher, real `ways` commands."""

from __future__ import annotations

import json

from ways_sensors.errors import NOT_RECORDING

from .conftest import payload, saved
from .helpers import lines, wait_until

GOOD = """\
enabled: true
rules:
  calls:
    sections: [tool_call]
    timeout: 5s
    dispatch: {{file: {{path: '{out}'}}}}
"""


def refused_lines(install) -> list[dict]:
    log = install.state_root / "events.log"
    if not log.exists():
        return []
    found = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    return [e for e in found if e.get("kind") == "sensor.refused"]


def fire_hooks(install, n: int) -> None:
    base = payload("PreToolUse")
    for i in range(n):
        r = install.hook({**base, "tool_use_id": f"toolu_refused_{i}"})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_a_typo_in_a_sensor_file_is_loud(install, tmp_path):
    out = tmp_path / "calls.jsonl"
    path = install.sensor("s", GOOD.format(out=out))
    fire_hooks(install, 1)
    assert wait_until(lambda: len(lines(out)) == 1)
    r = install.ways("status")
    assert r.returncode == 0, r.stdout

    saved(path, GOOD.format(out=out).replace("timeout: 5s", "timeout: 5 sec"))
    fire_hooks(install, 3)
    [line] = refused_lines(install)  # one line for the change, not one per event
    assert line["file"] == str(path) and line["line"] == 5 and line["enabled"] is True
    assert line["layer"] == "user" and line["sensor"] == "s"
    assert "sec" not in json.dumps(line)  # content-free: never the reason or the value

    r = install.ways("status")
    assert r.returncode == NOT_RECORDING, r.stdout
    first = r.stdout.splitlines()[0]
    assert "1 sensor file(s) refused" in first and f"{path}:5" in first
    assert "ways sensors lint" in first
    r = install.ways("status", "--json")
    assert r.returncode == NOT_RECORDING
    data = json.loads(r.stdout)
    assert [(f["file"], f["line"]) for f in data["refused"]] == [(str(path), 5)]
    assert f"{path}:5 refused" in data["not_recording"]
    prom = install.ways("status", "--prometheus")
    assert prom.returncode == 0 and "\nways_sensors_refused_files 1\n" in prom.stdout

    fire_hooks(install, 2)
    assert len(refused_lines(install)) == 1  # still the same file contents: logged once
    saved(path, GOOD.format(out=out).replace("timeout: 5s", "timeout: 7 sec"))
    fire_hooks(install, 1)
    assert len(refused_lines(install)) == 2  # changed, still refused: once more

    saved(path, GOOD.format(out=out))
    fire_hooks(install, 1)
    assert wait_until(lambda: len(lines(out)) == 2)  # recording again
    assert len(refused_lines(install)) == 2
    prom = install.ways("status", "--prometheus")
    assert "\nways_sensors_refused_files 0\n" in prom.stdout
    assert install.ways("status").returncode == 0


def test_a_refused_disabled_file_is_named_but_not_an_error(install, tmp_path):
    out = tmp_path / "calls.jsonl"
    text = GOOD.format(out=out).replace("enabled: true", "enabled: false")
    path = install.sensor("s", text.replace("timeout: 5s", "timeout: 5 sec"))
    r = install.ways("status", "--json")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["refused"][0]["file"] == str(path)
    assert data["refused"][0]["enabled"] is False and data["not_recording"] == []


def test_a_file_with_several_mistakes_is_one_file_refused(install, tmp_path):
    out = tmp_path / "calls.jsonl"
    broken = GOOD.format(out=out).replace("timeout: 5s", "timeout: 5 sec")
    path = install.sensor("s", broken.replace("sections:", "section:"))
    fire_hooks(install, 1)
    r = install.ways("status")
    assert r.returncode == NOT_RECORDING, r.stdout
    first = r.stdout.splitlines()[0]
    assert first.startswith("1 sensor file(s) refused") and first.count(str(path)) == 1
    data = json.loads(install.ways("status", "--json").stdout)
    assert len(data["refused"]) >= 2  # every mistake is still listed for machines
