"""The real Gemini CLI (0.61.0) under a user who switched its hooks system off
(`hooksConfig.enabled: false` in ~/.gemini/settings.json): a turn runs no hook at all;
with the system settings `ways reconcile --managed --agent gemini` staged (read through
GEMINI_CLI_SYSTEM_SETTINGS_PATH), the managed switch outranks the user's and the next
turn is recorded. Gemini CLI skips a system settings file any of whose folders, up to
/, is not root's or others can write, so the staged tree is under the repository's
.e2e folder, or under the home folder's cache when the clone is in /tmp."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from . import agents_harness as harness

pytestmark = pytest.mark.slow


def _safe(folder: Path) -> bool:
    """Gemini CLI's test for a system settings file's folders: the folder and each one
    above it owned by root and writable by no group or other."""
    for p in (folder, *folder.parents):
        st = p.stat()
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
    return True


@pytest.fixture
def system_root():
    """A staged system tree Gemini CLI will read: under the repository's .e2e folder, or,
    where the clone lies below a folder others can write (a clone in /tmp), under the
    home folder's cache."""
    candidates = [harness.REPO / ".e2e", Path.home() / ".cache" / "ways-e2e"]
    for parent in candidates:
        parent.mkdir(parents=True, exist_ok=True)
        if _safe(parent):
            break
    else:
        pytest.fail(f"no folder Gemini CLI trusts for system settings among {candidates}")
    root = tempfile.mkdtemp(prefix="gemini-system-", dir=parent)
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root)


def test_managed_settings_switch_hooks_on_over_a_users_off(tmp_path, system_root):
    s = harness.prepare(tmp_path / "session", "gemini")
    user = s.home / ".gemini" / "settings.json"
    settings = json.loads(user.read_text())
    user.write_text(json.dumps({**settings, "hooksConfig": {"enabled": False}}))
    s.truth_path.write_text("")
    harness.run_gemini(s, ["[plain] just talk"])
    assert s.results[-1]["_rc"] == 0, s.results[-1]["_stderr"]
    assert s.truth_lines() == []  # the user's switch: not one hook ran

    r = s.ways("reconcile", "--managed", "--agent", "gemini", "--root", system_root)
    assert r.returncode == 0, r.stderr
    system = os.path.join(system_root, "etc", "gemini-cli", "settings.json")
    s.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = system
    harness.run_gemini(s, ["[plain] just talk again"])
    assert s.results[-1]["_rc"] == 0, s.results[-1]["_stderr"]
    events = [t["hook_event_name"] for t in s.truth()]
    assert "SessionStart" in events and "BeforeAgent" in events
    prompts = [r["data"]["prompt"] for r in s.records() if r["section"] == "user_prompt"]
    assert prompts == ["[plain] just talk again"]
