"""The shape of the package itself: modules a maintainer can read in one sitting."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ways_sensors"
MAX_LINES = 400  # over about 400 lines a module is two nouns (issue 20)


def test_no_module_is_over_400_lines():
    sizes = {
        str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found, every module of it
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not over, f"split these (each over {MAX_LINES} lines): {over}"
