"""`ways reconcile` on real settings files, through the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ways_sensors.agents.claude_code.wiring import EVENTS, TOOL_EVENTS
from ways_sensors.commands.reconcile import hook_command

from ..conftest import LAUNCHER, payload

EXISTING = {
    "zeta": 1,
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 3}]}],
    },
    "alpha": {"nested": [1, 2, 3]},
}


def settings(install):
    return install.home / ".claude" / "settings.json"


def write(install, data, indent=4):
    path = settings(install)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n")
    return path


def ours(group):
    return [h for h in group["hooks"] if h.get("command", "").endswith("hook sensors")]


def test_wires_ten_events_and_keeps_everything_else(install):
    path = write(install, EXISTING)
    r = install.ways("reconcile")
    assert r.returncode == 0, r.stderr
    data = json.loads(path.read_text())
    assert list(data) == ["zeta", "permissions", "hooks", "alpha"]  # order kept
    assert data["permissions"] == EXISTING["permissions"] and data["alpha"] == EXISTING["alpha"]
    hooks = data["hooks"]
    assert hooks["Notification"][0] == EXISTING["hooks"]["Notification"][0]
    assert hooks["PreToolUse"][0] == EXISTING["hooks"]["PreToolUse"][0]
    assert hooks["Stop"][0] == EXISTING["hooks"]["Stop"][0]
    for event in EVENTS:
        mine = [h for g in hooks[event] for h in ours(g)]
        assert len(mine) == 1, event
        assert mine[0]["type"] == "command" and mine[0]["timeout"] == 15
        assert str(LAUNCHER) in mine[0]["command"] and " -S " in mine[0]["command"]
        group = next(g for g in hooks[event] if ours(g))
        assert group.get("matcher") == ("*" if event in TOOL_EVENTS else None)
    assert path.read_text().startswith('{\n    "zeta"')  # indentation kept


def test_twice_is_once_and_remove_restores(install):
    path = write(install, EXISTING)
    original = json.loads(path.read_text())
    install.ways("reconcile")
    once = path.read_bytes()
    r = install.ways("reconcile")
    assert r.returncode == 0 and "nothing to change" in r.stdout
    assert path.read_bytes() == once
    assert install.ways("reconcile", "--remove").returncode == 0
    assert json.loads(path.read_text()) == original


def test_remove_on_a_fresh_file_removes_the_hooks_key_it_added(install):
    path = write(install, {"model": "x"})
    install.ways("reconcile")
    install.ways("reconcile", "--remove")
    assert json.loads(path.read_text()) == {"model": "x"}


def test_creates_a_missing_file_and_project_settings(install):
    assert install.ways("reconcile").returncode == 0
    assert set(json.loads(settings(install).read_text())["hooks"]) == set(EVENTS)
    r = install.ways("reconcile", "--project", str(install.project))
    assert r.returncode == 0
    proj = install.project / ".claude" / "settings.json"
    assert set(json.loads(proj.read_text())["hooks"]) == set(EVENTS)


def test_an_older_form_of_ours_is_replaced_in_place(install):
    old = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "guard.sh"},
                        {"type": "command", "command": "ways hook sensors"},
                        {"type": "command", "command": "after.sh"},
                    ],
                },
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/python -S /old/_launch.py hook sensors",
                        }
                    ],
                },
            ]
        }
    }
    path = write(install, old)
    install.ways("reconcile")
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert next(h["command"] for h in groups[0]["hooks"]) == "guard.sh"
    assert [h["command"] for h in groups[0]["hooks"]][2] == "after.sh"
    assert str(LAUNCHER) in groups[0]["hooks"][1]["command"]
    assert len(groups) == 1  # the duplicate of ours went, with the group it emptied


def test_unparseable_settings_are_never_overwritten(install):
    path = settings(install)
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": {,,}')
    before = path.read_bytes()
    r = install.ways("reconcile")
    assert r.returncode == 5
    assert "not valid JSON" in r.stderr and "ways reconcile" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before
    path.write_text("[1, 2]")
    assert install.ways("reconcile").returncode == 5


def test_dry_run_writes_nothing(install):
    path = write(install, EXISTING)
    before = path.read_bytes()
    r = install.ways("reconcile", "--dry-run")
    assert r.returncode == 0 and "+" in r.stdout and "hook sensors" in r.stdout
    assert path.read_bytes() == before


def test_file_mode_is_kept(install):
    path = write(install, {})
    os.chmod(path, 0o640)
    install.ways("reconcile")
    assert (path.stat().st_mode & 0o777) == 0o640


def test_the_wired_command_runs_the_hook(install, tmp_path):
    install.ways("reconcile")
    data = json.loads(settings(install).read_text())
    cmd = data["hooks"]["PreToolUse"][-1]["hooks"][0]["command"]
    python = cmd.split(" -S ")[0].split()[-1]
    assert os.path.dirname(python) == os.path.dirname(sys.executable)  # this venv
    assert cmd == hook_command(python, str(LAUNCHER))
    install.sensor(
        "x",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    r = subprocess.run(
        ["sh", "-c", cmd],
        input=json.dumps(payload("PreToolUse")).encode(),
        capture_output=True,
        env=install.env,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert list((install.sessions()).glob("*/spool/*.seg"))


# Unusual settings files (issue 12, defect 7): a dotfiles symlink, a read-only file,
# duplicate keys, a "hooks" that is not in the shape the wiring edits.


def _refused(install, path, *args, needle):
    """reconcile exits 5 with one line naming `needle` and the file; the file is as it was."""
    before = path.read_bytes()
    r = install.ways("reconcile", *args)
    assert r.returncode == 5, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0] and str(path) in lines[0], lines[0]
    assert path.read_bytes() == before
    return lines[0]


def test_a_symlinked_settings_file_is_written_through_to_its_target(install):
    dotfiles = install.home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_text(json.dumps({"model": "x"}, indent=2) + "\n")
    os.chmod(target, 0o640)
    link = settings(install)
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.join("..", "dotfiles", "claude-settings.json"))
    assert install.ways("reconcile").returncode == 0
    assert link.is_symlink()
    assert os.readlink(link) == os.path.join("..", "dotfiles", "claude-settings.json")
    data = json.loads(target.read_text())
    assert data["model"] == "x" and set(data["hooks"]) == set(EVENTS)
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]  # no temp
    assert install.ways("reconcile", "--remove").returncode == 0
    assert link.is_symlink() and json.loads(target.read_text()) == {"model": "x"}


def test_a_dangling_settings_symlink_creates_its_target(install):
    target = install.home / "dotfiles" / "claude.json"
    target.parent.mkdir()
    link = settings(install)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    assert install.ways("reconcile").returncode == 0
    assert link.is_symlink() and set(json.loads(target.read_text())["hooks"]) == set(EVENTS)


def test_a_read_only_settings_file_is_refused(install):
    path = write(install, {"model": "x"})
    os.chmod(path, 0o444)
    _refused(install, path, needle="read-only")
    assert (path.stat().st_mode & 0o777) == 0o444
    # through a symlink, the target's mode decides
    os.chmod(path, 0o644)
    target = install.home / "ro.json"
    target.write_text('{"model": "y"}\n')
    os.chmod(target, 0o444)
    path.unlink()
    path.symlink_to(target)
    before = target.read_bytes()
    r = install.ways("reconcile")
    assert r.returncode == 5 and "read-only" in r.stderr, r.stderr
    assert target.read_bytes() == before and path.is_symlink()


def test_a_read_only_file_that_needs_no_change_is_fine(install):
    path = write(install, {})
    assert install.ways("reconcile").returncode == 0
    os.chmod(path, 0o444)
    r = install.ways("reconcile")
    assert r.returncode == 0 and "nothing to change" in r.stdout


def test_duplicate_keys_are_refused_not_lost(install):
    path = settings(install)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus",\n "env": {"A": "1"},\n "model": "sonnet"}\n')
    line = _refused(install, path, needle='"model"')
    assert "twice" in line
    path.write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a.sh"}]}],\n'
        '           "Stop": [{"hooks": [{"type": "command", "command": "b.sh"}]}]}}\n'
    )
    _refused(install, path, needle='"Stop"')
    _refused(install, path, "--remove", needle='"Stop"')


def test_hooks_not_in_the_wired_shape_are_refused(install):
    path = settings(install)
    path.parent.mkdir(parents=True)
    for bad, needle in [
        ({"hooks": "not hooks"}, '"hooks"'),
        ({"hooks": ["Stop"]}, '"hooks"'),
        ({"hooks": None}, '"hooks"'),
        ({"hooks": {"Stop": {"hooks": []}}}, '"Stop"'),
        ({"hooks": {"Notification": "say hi"}}, '"Notification"'),
    ]:
        path.write_text(json.dumps(bad) + "\n")
        _refused(install, path, needle=needle)
        _refused(install, path, "--remove", needle=needle)


def test_a_settings_path_that_is_not_a_regular_file_is_refused(install):
    path = settings(install)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    r = install.ways("reconcile", timeout=20)  # reading a FIFO would block forever
    assert r.returncode == 5 and "not a regular file" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_deeply_nested_settings_are_refused_in_one_line(install):
    path = settings(install)
    path.parent.mkdir(parents=True)
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _refused(install, path, needle="nested")
