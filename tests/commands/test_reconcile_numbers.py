"""`ways reconcile` (the real command) on settings files a rewrite could not keep:
a number beyond a float's range, an integer of 5,000 digits, a folder where the file
goes. Each is left untouched with one line naming it; `--agent all` wires the others."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"model": "x", "n": 1e999}', "holds the number 1e999"),
        ('{"n": -1e999}', "holds the number -1e999"),
        ('{"n": NaN}', "holds the number NaN"),
        ('{"n": ' + "9" * 5000 + "}", "integer too long"),
    ],
)
def test_a_number_a_rewrite_would_change_leaves_the_file_untouched(install, text, why):
    path = install.home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    r = install.ways("reconcile")
    assert r.returncode == 5, r.stdout + r.stderr
    assert why in r.stderr and "left untouched" in r.stderr and "unexpected" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert path.read_text() == text  # never rewritten as Infinity (JSON has no such thing)
    assert not (install.state_root / "errors.log").exists()


def test_a_folder_where_a_settings_file_goes_skips_that_agent_only(install):
    (install.home / ".claude" / "settings.json").mkdir(parents=True)
    (install.home / ".gemini").mkdir()
    (install.home / ".codex").mkdir()
    r = install.ways("reconcile", "--agent", "all")
    assert r.returncode == 5, r.stdout + r.stderr
    assert "settings.json is not a regular file; left untouched" in r.stderr
    assert "unexpected" not in r.stderr
    gemini = json.loads((install.home / ".gemini" / "settings.json").read_text())
    codex = json.loads((install.home / ".codex" / "hooks.json").read_text())
    assert "hooks" in gemini and "hooks" in codex  # the other agents were wired
    assert (install.home / ".claude" / "settings.json").is_dir()
    assert not (install.state_root / "errors.log").exists()
