"""The install page's commands work as written on a fresh home (#36: the runtime-only
install's link failed where ~/.local/bin did not exist yet)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "docs" / "install.md"


def test_the_runtime_only_install_links_ways_on_a_fresh_home(tmp_path):
    text = README.read_text()
    [line] = [x for x in re.findall(r"^.*ln -s .*$", text, re.M) if "ways-venv" in x]
    command = line.split("#", 1)[0].strip()
    home = tmp_path / "home"
    venv_bin = home / ".local" / "share" / "ways-venv" / "bin"
    venv_bin.mkdir(parents=True)  # what `python3 -m venv` and pip left
    (venv_bin / "ways").write_text("#!/bin/sh\necho ways\n")
    (venv_bin / "ways").chmod(0o755)
    env = {**os.environ, "HOME": str(home)}
    r = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    link = home / ".local" / "bin" / "ways"
    assert link.is_symlink() and link.resolve() == (venv_bin / "ways").resolve()
