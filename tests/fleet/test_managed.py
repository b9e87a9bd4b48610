"""`ways reconcile --managed` through the real command, staged with --root: every
agent's system file written, merged without touching the administrator's keys, and
given back byte for byte by --remove."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from ways_sensors import agents
from ways_sensors.agents.wired import is_our_command

from ..conftest import payload

FILES = {
    "claude-code": "etc/claude-code/managed-settings.d/50-ways-sensors.json",
    "codex": "etc/codex/requirements.toml",
    "gemini": "etc/gemini-cli/settings.json",
    "cursor": "etc/cursor/hooks.json",
    "copilot": "etc/github-copilot/policy.d/ways-sensors.json",
}
# What an administrator already had: odd spacing, key order, escapes and other hooks
# that a JSON rewrite would not reproduce, so only a byte-for-byte restore passes.
ADMIN = {
    "etc/gemini-cli/settings.json": (
        '{"security": {"auth": {"selectedType": "oauth-personal"}},\n'
        '   "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks":'
        ' [{"type": "command", "command": "/opt/guard \\u00e9", "timeout": 5000}]}]},\n'
        '"ui": {"theme": "Default"}}\n'
    ),
    "etc/cursor/hooks.json": (
        '{"hooks": {"beforeShellExecution": [{"command": "/usr/local/bin/dlp"}]}, "version": 1}'
    ),
    "etc/codex/requirements.toml": (
        "# the administrator's\nallowed_approval_policies = [ \"untrusted\", 'on-request' ]\n\n"
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify"\n\n'
        "[features]\nweb_search = false"  # no newline at the end
    ),
    "etc/claude-code/managed-settings.json": '{"allowManagedHooksOnly": true}\n',
}


def tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every folder and file under root: its mode and bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            mode = stat.S_IMODE(p.stat().st_mode)
            out[str(p.relative_to(root))] = (mode, p.read_bytes() if p.is_file() else None)
    return out


def stage(tmp_path: Path, admin: dict[str, str] = ADMIN) -> Path:
    root = tmp_path / "image"
    for rel, text in admin.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        p.chmod(0o640 if "codex" in rel else 0o644)
    return root


def load(path: Path) -> dict:
    """A wiring file's data: JSON, or Codex's TOML requirements."""
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def commands_of(data, key: str = "command") -> list[str]:
    """Every handler command in a hooks file of either shape."""
    out = []
    for handlers in (data.get("hooks") or {}).values():
        for h in handlers:
            if "hooks" in h:
                out += [x.get(key) for x in h["hooks"]]
            else:
                out.append(h.get(key))
    return [c for c in out if c]


def test_all_five_agents_staged_0644_with_every_event(install, tmp_path):
    root = stage(tmp_path)
    r = install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    assert r.returncode == 0, r.stderr
    for agent, rel in FILES.items():
        path = root / rel
        assert stat.S_IMODE(path.stat().st_mode) in (0o644, 0o640), rel
        data = load(path)
        key = "bash" if agent == "copilot" else "command"
        ours = [c for c in commands_of(data, key) if is_our_command(c, agent)]
        events = agents.adapter(agent).WIRED_EVENTS
        assert len(ours) == len(events), agent
        assert str(root) not in ours[0]  # the command names the install, not the stage
    for made in ("etc/claude-code/managed-settings.d", "etc/github-copilot/policy.d"):
        assert stat.S_IMODE((root / made).stat().st_mode) == 0o755
    assert stat.S_IMODE((root / FILES["copilot"]).stat().st_mode) == 0o644  # not g/o-writable
    assert stat.S_IMODE((root / FILES["claude-code"]).stat().st_mode) == 0o644
    # the administrator's own keys and hooks are all still there
    gemini = json.loads((root / FILES["gemini"]).read_text())
    assert gemini["security"] == {"auth": {"selectedType": "oauth-personal"}}
    assert "/opt/guard é" in commands_of(gemini)
    assert "/usr/local/bin/dlp" in commands_of(json.loads((root / FILES["cursor"]).read_text()))
    assert stat.S_IMODE((root / FILES["codex"]).stat().st_mode) == 0o640  # a merged file's mode
    codex = load(root / FILES["codex"])
    assert codex["features"] == {"web_search": False}
    assert codex["allowed_approval_policies"] == ["untrusted", "on-request"]
    assert commands_of(codex)[0] == "notify"  # the administrator's hook first, then ours
    # Gemini CLI's hooks system switched on, in the key of each generation of it
    assert gemini["hooksConfig"] == {"enabled": True}
    assert gemini["tools"] == {"enableHooks": True}


def test_a_second_run_changes_nothing(install, tmp_path):
    root = stage(tmp_path)
    install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    before = tree(root)
    r = install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    assert r.returncode == 0
    assert r.stdout.count("nothing to change") == 5
    assert tree(root) == before


def test_remove_gives_back_every_file_byte_for_byte(install, tmp_path):
    root = stage(tmp_path)
    before = tree(root)
    install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    assert tree(root) != before
    r = install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root), "--remove")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("restored byte for byte") == 3
    assert r.stdout.count("deleted") == 2
    assert tree(root) == before  # files, modes, and no folder of ours left


def test_remove_from_an_empty_machine_leaves_it_empty(install, tmp_path):
    root = tmp_path / "image"
    (root / "etc").mkdir(parents=True)
    install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root), "--remove")
    assert tree(root) == {"etc": (0o755, None)}


def test_a_file_changed_since_wiring_keeps_the_change(install, tmp_path):
    root = stage(tmp_path)
    install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root))
    path = root / FILES["gemini"]
    data = json.loads(path.read_text())
    data["ui"]["theme"] = "Dark"  # the administrator's edit after ways wired it
    path.write_text(json.dumps(data))
    r = install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root), "--remove")
    assert "not restored as it was" in r.stdout
    after = json.loads(path.read_text())
    assert after["ui"]["theme"] == "Dark"
    assert not [c for c in commands_of(after) if is_our_command(c, "gemini")]
    assert "/opt/guard é" in commands_of(after)


def test_one_broken_file_leaves_the_others_wired(install, tmp_path):
    root = stage(tmp_path, {"etc/cursor/hooks.json": "{not json"})
    r = install.ways("reconcile", "--managed", "--agent", "all", "--root", str(root))
    assert r.returncode == 5
    assert "etc/cursor/hooks.json is not valid JSON" in r.stderr
    assert (root / "etc/cursor/hooks.json").read_text() == "{not json"
    for agent in ("claude-code", "codex", "gemini", "copilot"):
        assert (root / FILES[agent]).exists()


def test_dry_run_writes_nothing(install, tmp_path):
    root = stage(tmp_path)
    before = tree(root)
    r = install.ways(
        "reconcile", "--managed", "--agent", "cursor", "--root", str(root), "--dry-run"
    )
    assert r.returncode == 0 and "+++" in r.stdout and "hook sensors --agent cursor" in r.stdout
    assert tree(root) == before


def test_root_and_project_are_refused_in_the_wrong_mode(install, tmp_path):
    r = install.ways("reconcile", "--root", str(tmp_path))
    assert r.returncode == 2 and "--managed" in r.stderr
    r = install.ways("reconcile", "--managed", "--project", str(tmp_path), "--root", str(tmp_path))
    assert r.returncode == 2


def test_the_staged_claude_code_command_records(install, tmp_path):
    """The command in the drop-in is the hook itself: run through sh with a real
    payload, it hands the event on (the e2e suite runs it under the real client)."""
    root = stage(tmp_path)
    install.ways("reconcile", "--managed", "--agent", "claude-code", "--root", str(root))
    out = tmp_path / "out.jsonl"
    install.sensor(
        "all",
        f"""
        rules:
          all:
            sections: [session_start]
            dispatch: {{file: {{path: "{out}"}}}}
        """,
    )
    data = json.loads((root / FILES["claude-code"]).read_text())
    [command] = {c for c in commands_of(data)}
    r = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload("SessionStart")).encode(),
        env=install.env,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout == b""
    from ..helpers import wait_until

    assert wait_until(lambda: out.exists() and out.read_text().strip(), timeout=30)
    assert json.loads(out.read_text().splitlines()[0])["section"] == "session_start"
    assert sys.executable  # the interpreter the command names is this environment's


def test_gemini_hooks_switched_on_and_put_back_as_they_were(install, tmp_path):
    """An administrator who had turned the hooks system off, and had other `tools`
    keys: wiring turns it on; --remove after an edit puts back their `false` and
    their `tools` as they were, and keeps the edit."""
    admin = '{"hooksConfig": {"enabled": false}, "tools": {"sandbox": "docker"}}\n'
    root = stage(tmp_path, {FILES["gemini"]: admin})
    path = root / FILES["gemini"]
    install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root))
    data = load(path)
    assert data["hooksConfig"] == {"enabled": True}
    assert data["tools"] == {"sandbox": "docker", "enableHooks": True}
    data["ui"] = {"theme": "Dark"}  # the administrator's edit after ways wired it
    path.write_text(json.dumps(data))
    r = install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root), "--remove")
    assert "not restored as it was" in r.stdout
    assert load(path) == {
        "hooksConfig": {"enabled": False},
        "tools": {"sandbox": "docker"},
        "ui": {"theme": "Dark"},
    }


def test_gemini_switches_leave_with_the_objects_wiring_made(install, tmp_path):
    root = stage(tmp_path, {FILES["gemini"]: '{"ui": {"theme": "Default"}}\n'})
    path = root / FILES["gemini"]
    install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root))
    data = load(path)
    assert (data["hooksConfig"], data["tools"]) == ({"enabled": True}, {"enableHooks": True})
    data["ui"]["theme"] = "Dark"
    path.write_text(json.dumps(data))
    install.ways("reconcile", "--managed", "--agent", "gemini", "--root", str(root), "--remove")
    assert load(path) == {"ui": {"theme": "Dark"}}  # no empty hooksConfig, tools or hooks


def test_codex_requirements_keep_the_administrators_text_and_edits(install, tmp_path):
    root = stage(tmp_path)
    path = root / FILES["codex"]
    install.ways("reconcile", "--managed", "--agent", "codex", "--root", str(root))
    text = path.read_text()
    assert text.startswith(ADMIN[FILES["codex"]])  # their text, untouched, then our block
    path.write_text(text.replace("web_search = false", "web_search = true"))
    r = install.ways("reconcile", "--managed", "--agent", "codex", "--root", str(root), "--remove")
    assert "not restored as it was" in r.stdout
    after = load(path)
    assert after["features"] == {"web_search": True}
    assert commands_of(after) == ["notify"]


@pytest.mark.parametrize(
    "admin",
    [
        "hooks = { Stop = [] }\n",  # an inline table cannot take [[hooks.X]] tables
        "[hooks]\nSessionStart = []\n",  # nor can a static array
        "[features\n",  # not TOML
    ],
    ids=["inline-table", "static-array", "not-toml"],
)
def test_codex_requirements_that_cannot_take_our_hooks_are_left_untouched(install, tmp_path, admin):
    root = stage(tmp_path, {FILES["codex"]: admin})
    before = tree(root)
    r = install.ways("reconcile", "--managed", "--agent", "codex", "--root", str(root))
    assert r.returncode == 5, r.stdout
    assert "left untouched" in r.stderr and "requirements.toml" in r.stderr
    assert tree(root) == before


def test_status_sees_codex_wired_in_the_requirements(install, tmp_path):
    """Codex's managed wiring counts as wiring: an installed Codex is not named
    `not-wired` once the requirements carry our hooks."""
    root = stage(tmp_path, {})
    install.env["WAYS_SYSTEM_ROOT"] = str(root)
    (install.home / ".codex").mkdir()
    install.ways("reconcile", "--managed", "--agent", "claude-code", "--root", str(root))
    found = json.loads(install.ways("status", "--json").stdout)["blocked"]
    assert [(f["agent"], f["kind"]) for f in found] == [("codex", "not-wired")]
    install.ways("reconcile", "--managed", "--agent", "codex", "--root", str(root))
    assert [c for c in commands_of(load(root / FILES["codex"])) if is_our_command(c, "codex")]
    assert json.loads(install.ways("status", "--json").stdout)["blocked"] == []
