"""The real Claude Code client under `allowManagedHooksOnly`: wired by `ways reconcile
--managed` it is recorded and the chain verifies; wired only at user level it records
nothing, and `ways status` names the policy file and exits 6. Each session runs in a
private mount namespace over an overlay of /etc (needs root, as a managed install
does), so the machine's /etc is never written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from . import harness

pytestmark = pytest.mark.slow

FILES = (
    "claude-code/managed-settings.d/50-ways-sensors.json",
    "codex/requirements.toml",
    "gemini-cli/settings.json",
    "cursor/hooks.json",
    "github-copilot/policy.d/ways-sensors.json",
)


def in_namespace(root: Path, mode: str) -> Path:
    """Run managed_session with /etc overlaid; returns what it wrote to /etc."""
    harness.claude_bin()  # installed outside the namespace, once
    return harness.in_etc_overlay(root, "managed_session", mode)


def truth(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "truth.jsonl.managed").read_text().splitlines()]


@pytest.fixture(scope="module")
def managed(tmp_path_factory):
    root = tmp_path_factory.mktemp("managed")
    return root / "run", in_namespace(root, "managed")


@pytest.fixture(scope="module")
def user_only(tmp_path_factory):
    root = tmp_path_factory.mktemp("user-only")
    return root / "run", in_namespace(root, "user")


def test_reconcile_managed_wired_all_five_system_files(managed):
    _, upper = managed
    for rel in FILES:
        assert (upper / rel).stat().st_mode & 0o777 == 0o644, rel
        assert "hook sensors" in (upper / rel).read_text()


def test_the_managed_session_is_recorded_and_verifies(managed):
    run, _ = managed
    sid = json.loads((run / "session.json").read_text())["session_id"]
    sent = Counter(t["tool_use_id"] for t in truth(run) if t["hook_event_name"] == "PreToolUse")
    assert len(sent) >= 3  # [secret] one call, [par] two
    path = run / "audit" / f"{sid}.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    got = Counter(r["data"]["tool_use_id"] for r in records if r["section"] == "tool_call")
    assert got == sent
    assert not (run / "truth.jsonl").exists()  # the user-level recorder was held back
    code, said = json.loads((run / "verify.json").read_text())
    assert code == 0, said
    status = json.loads((run / "status.json").read_text())
    assert status["blocked"] == []


def test_user_wiring_alone_records_nothing_and_status_says_why(user_only):
    run, _ = user_only
    assert any(t["hook_event_name"] == "PreToolUse" for t in truth(run))  # hooks did run
    assert not any((run / "audit").iterdir())  # and ways recorded nothing
    assert (run / "status.code").read_text() == "6"
    [found] = json.loads((run / "status.json").read_text())["blocked"]
    assert found["kind"] == "managed-only"
    assert found["file"] == "/etc/claude-code/managed-settings.json"
