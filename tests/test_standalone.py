"""The repository stands alone: no tracked file points at material outside it.

A clone is all a user has. Tests, benches, docs and code must use what the repository
holds (tests/fixtures/, docs/), never a folder that happens to sit beside the checkout
on a developer's machine. `.ci/` is the one exception: it belongs to the machine that
runs the suite.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# built here so that this file does not match itself
NEEDLES = ("/".join(["..", "shared"]).encode(), "/".join(["", "work", "shared"]).encode())


def tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
    ).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def offenders(files: list[Path]) -> list[str]:
    found = []
    for path in files:
        rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
        if rel.startswith(".ci/") or not path.is_file():
            continue
        data = path.read_bytes()
        found += [f"{rel}: {n.decode()}" for n in NEEDLES if n in data]
    return found


def test_no_tracked_file_points_outside_the_repository():
    files = tracked()
    assert REPO / "tests" / "test_standalone.py" in files  # the listing works
    assert offenders(files) == []


def test_the_check_finds_a_pointer(tmp_path):
    bad = tmp_path / "conftest.py"
    bad.write_bytes(b"PAYLOADS = REPO.parent / 'x'\nSPEC = '" + NEEDLES[0] + b"/SPEC.md'\n")
    worse = tmp_path / "bench.py"
    worse.write_bytes(NEEDLES[1] + b"/reference/payloads")
    assert offenders([bad, worse]) == [
        f"{bad}: {NEEDLES[0].decode()}",
        f"{worse}: {NEEDLES[1].decode()}",
    ]


MARKERS = re.compile(rb"^(?:<{7}|>{7}) ", re.M)  # a merge left unresolved


def test_no_tracked_file_holds_a_merge_conflict():
    """A conflict committed by mistake breaks a README or a module silently."""
    found = [
        p.relative_to(REPO).as_posix()
        for p in tracked()
        if p.is_file() and p.suffix != ".svg" and MARKERS.search(p.read_bytes())
    ]
    assert found == []
    assert MARKERS.search(b"x\n" + b"<" * 7 + b" HEAD\n")  # the check finds one
