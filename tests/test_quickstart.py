"""The README's quick start, run verbatim in a fresh shell on a clean clone.

A clean clone of the repository (committed files only, no .venv), a HOME of its own,
no XDG or Claude variables, and the quick start's block run by `sh -e` line for line.
`claude` is the real Claude Code client (the end-to-end suite's pinned one) talking to
our scripted Messages API on loopback: the only stand-in is the model behind it.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from .e2e import messages_api
from .e2e.harness import claude_bin, client_env

REPO = Path(__file__).resolve().parent.parent


def quick_start() -> str:
    readme = (REPO / "README.md").read_text()
    m = re.search(r"^## Quick start.*?```sh\n(.*?)```", readme, re.M | re.S)
    assert m, "README.md has no quick start block"
    return m.group(1)


@pytest.mark.slow
def test_the_readme_quick_start_works_verbatim_on_a_clean_clone(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)],
        check=True,
        timeout=120,
    )
    home = tmp_path / "home"
    home.mkdir()
    shims = tmp_path / "bin"
    shims.mkdir()
    server, url = messages_api.serve()
    try:
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("XDG_", "CLAUDE", "ANTHROPIC", "WAYS_", "VIRTUAL_ENV"))
        }
        base.update(HOME=str(home), NO_COLOR="1")
        # `claude` on PATH: the real client, its model our loopback API
        client = {k: v for k, v in client_env(_Session(base), url).items() if k not in base}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in client.items())
        shim = shims / "claude"
        shim.write_text(f'#!/bin/sh\nexec env {exports} {shlex.quote(claude_bin())} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
        base["PATH"] = f"{shims}:{base['PATH']}"
        r = subprocess.run(
            ["sh", "-e", "-x", "-c", quick_start()],
            cwd=clone,
            env=base,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        server.shutdown()
        server.server_close()
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "no rule is enabled" in out and "ways.sensors.audit.enabled true" in out, out
    assert '"schema": "ways.sensor.record/1"' in r.stdout or '"schema":"ways.sensor.record/1"' in (
        r.stdout.replace(" ", "")
    ), out[-4000:]
    assert "intact" in r.stdout, out[-4000:]
    records = list((home / "agent-audit").glob("*/*.jsonl"))
    assert records, out[-4000:]


class _Session:
    """What client_env reads of the e2e harness's Session: its environment."""

    def __init__(self, env: dict[str, str]):
        self.env = env
