"""The inventory on a session's first record, through the real hook and dispatcher: the
agents wired (user level and managed), and hashes that move when a sensor file or an
agent's hooks change."""

from __future__ import annotations

import json
import re

from ways_sensors import __version__

from ..helpers import dispatcher_done, lines, play, wait_until


def session(install, out, sid: str) -> list[dict]:
    play(install, ["SessionStart", "UserPromptSubmit", "SessionEnd"], session_id=sid)
    assert wait_until(lambda: dispatcher_done(install, sid), timeout=60)
    return [r for r in lines(out) if r["session_id"] == sid]


def test_the_first_record_says_what_install_made_it(install, tmp_path):
    system = tmp_path / "system"
    install.env["WAYS_SYSTEM_ROOT"] = str(system)
    assert install.ways("reconcile").returncode == 0
    r = install.ways("reconcile", "--managed", "--agent", "codex", "--root", str(system))
    assert r.returncode == 0
    out = tmp_path / "out.jsonl"
    sensor = install.sensor(
        "inv",
        f"rules:\n  r:\n    sections: [session_start, user_prompt, session_end]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    first = session(install, out, "11111111-1111-4111-8111-111111111111")
    assert [r["seq"] for r in first] == [1, 2, 3]
    inv = first[0]["inventory"]
    assert not any("inventory" in r for r in first[1:])
    assert inv["ways_version"] == __version__
    assert inv["agents_wired"] == ["claude-code", "codex"]
    assert re.fullmatch(r"[0-9a-f]{64}", inv["sensors_sha256"])
    assert set(inv["hooks_sha256"]) == {"claude-code", "codex"}

    sensor.write_text(sensor.read_text() + "description: changed\n")
    settings = install.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "other-tool"}]})
    settings.write_text(json.dumps(data))
    again = session(install, out, "22222222-2222-4222-8222-222222222222")[0]["inventory"]
    assert again["sensors_sha256"] != inv["sensors_sha256"]
    assert again["hooks_sha256"]["claude-code"] != inv["hooks_sha256"]["claude-code"]
    assert again["hooks_sha256"]["codex"] == inv["hooks_sha256"]["codex"]
