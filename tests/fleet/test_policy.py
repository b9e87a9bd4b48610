"""`ways status` naming what blocks recording, through the real command, with the
system files staged under $WAYS_SYSTEM_ROOT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..helpers import PY

NOT_RECORDING = 6


@pytest.fixture
def system(install, tmp_path):
    root = tmp_path / "system"
    (root / "etc").mkdir(parents=True)
    install.env["WAYS_SYSTEM_ROOT"] = str(root)
    return root


def put(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def blocked(install) -> tuple[int, list[dict], str]:
    r = install.ways("status", "--json")
    text = install.ways("status")
    assert text.returncode == r.returncode
    return r.returncode, json.loads(r.stdout)["blocked"], text.stdout


def test_nothing_wired_nothing_said(install, system):
    code, found, _ = blocked(install)
    assert (code, found) == (0, [])


def test_user_wiring_under_allow_managed_hooks_only(install, system):
    assert install.ways("reconcile").returncode == 0
    assert blocked(install)[:2] == (0, [])
    policy = put(system / "etc/claude-code/managed-settings.json", {"allowManagedHooksOnly": True})
    code, found, text = blocked(install)
    assert code == NOT_RECORDING
    assert found == [
        {
            "agent": "claude-code",
            "kind": "managed-only",
            "file": str(policy),
            "why": found[0]["why"],
        }
    ]
    assert "NOT RECORDING claude-code: allowManagedHooksOnly" in text and str(policy) in text
    # wired where the policy lets hooks run: nothing blocks any more
    r = install.ways("reconcile", "--managed", "--agent", "claude-code", "--root", str(system))
    assert r.returncode == 0
    assert blocked(install)[:2] == (0, [])


def test_a_later_drop_in_decides(install, system):
    install.ways("reconcile")
    put(system / "etc/claude-code/managed-settings.json", {"allowManagedHooksOnly": True})
    put(
        system / "etc/claude-code/managed-settings.d/90-relax.json",
        {"allowManagedHooksOnly": False},
    )
    assert blocked(install)[:2] == (0, [])
    off = put(system / "etc/claude-code/managed-settings.d/95-off.json", {"disableAllHooks": True})
    code, found, _ = blocked(install)
    assert code == NOT_RECORDING
    assert [(f["kind"], f["file"]) for f in found] == [("hooks-disabled", str(off))]


def test_disable_all_hooks_in_user_settings_but_not_over_managed_wiring(install, system):
    install.ways("reconcile")
    settings = install.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    put(settings, {**data, "disableAllHooks": True})
    code, found, _ = blocked(install)
    assert code == NOT_RECORDING
    assert [(f["kind"], f["file"]) for f in found] == [("hooks-disabled", str(settings))]
    # the project's local settings may turn it back on: local outranks user
    put(install.project / ".claude" / "settings.local.json", {"disableAllHooks": False})
    assert blocked(install)[:2] == (0, [])
    (install.project / ".claude" / "settings.local.json").unlink()
    install.ways("reconcile", "--managed", "--agent", "claude-code", "--root", str(system))
    assert blocked(install)[:2] == (0, [])  # user settings cannot disable managed hooks


def test_hooks_pointing_at_a_ways_that_is_gone(install, system, tmp_path):
    install.ways("reconcile")
    settings = install.home / ".claude" / "settings.json"
    gone = str(tmp_path / "old-venv" / "bin" / "python")
    settings.write_text(settings.read_text().replace(PY, gone))
    code, found, text = blocked(install)
    assert code == NOT_RECORDING
    assert [(f["kind"], f["file"]) for f in found] == [("ways-missing", str(settings))]
    assert gone in found[0]["why"] and gone in text


def test_an_installed_agent_left_unwired(install, system):
    install.ways("reconcile")
    (install.home / ".gemini").mkdir()
    code, found, _ = blocked(install)
    assert code == NOT_RECORDING
    want = str(install.home / ".gemini" / "settings.json")
    assert [(f["agent"], f["kind"], f["file"]) for f in found] == [("gemini", "not-wired", want)]
    assert install.ways("reconcile", "--agent", "gemini").returncode == 0
    assert blocked(install)[:2] == (0, [])


def test_codex_hooks_switched_off_by_the_administrator(install, system):
    (install.home / ".codex").mkdir()
    install.ways("reconcile", "--agent", "codex")
    assert blocked(install)[:2] == (0, [])
    req = put(system / "etc/codex/requirements.toml", "[features]\nhooks = false\n")
    code, found, _ = blocked(install)
    assert code == NOT_RECORDING
    assert [(f["agent"], f["kind"], f["file"]) for f in found] == [
        ("codex", "hooks-disabled", str(req))
    ]
