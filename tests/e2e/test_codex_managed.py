"""The real Codex CLI (0.169.0) without --dangerously-bypass-hook-trust: wired at user
level, ways' hook waits for a trust review in /hooks and nothing is recorded; wired by
`ways reconcile --managed` in /etc/codex/requirements.toml (and no user-level file),
Codex reads our TOML block, runs the hooks as managed, untrusted, and the turn is
recorded. Each session runs in a private mount namespace
over an overlay of /etc (needs root, as a managed install does), so the machine's /etc
is never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import agents_harness as harness
from .harness import in_etc_overlay

pytestmark = pytest.mark.slow


def in_namespace(root: Path, mode: str) -> tuple[Path, Path]:
    """Run codex_managed_session with /etc overlaid; returns (its folder, what it wrote
    to /etc)."""
    harness.codex_bin()  # installed outside the namespace, once
    return root / "run", in_etc_overlay(root, "codex_managed_session", mode)


def records(run: Path) -> list[dict]:
    sid = json.loads((run / "session.json").read_text())["session_id"]
    path = run / "audit" / f"all-{sid}.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r.get("section") != "checkpoint"]


def test_managed_hooks_run_without_a_trust_review(tmp_path):
    run, upper = in_namespace(tmp_path / "managed", "managed")
    assert "hook sensors --agent codex" in (upper / "codex" / "requirements.toml").read_text()
    got = records(run)
    sections = {r["section"] for r in got}
    assert {"session_start", "user_prompt"} <= sections, sections
    assert [r["data"]["prompt"] for r in got if r["section"] == "user_prompt"] == [
        "[plain] just talk"
    ]


def test_user_level_hooks_wait_for_a_trust_review(tmp_path):
    run, upper = in_namespace(tmp_path / "user", "user")
    assert not (upper / "codex").exists()
    assert records(run) == []
