"""The shape of the package itself: modules a maintainer can read in one sitting, and
imports that run one way (every import statement counted, wherever it stands: inside a
function or under TYPE_CHECKING too)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ways_sensors"
MAX_LINES = 400  # over about 400 lines a module is two nouns (issue 20)
MAX_ROOT = 15  # modules in the package root (issue 34)


def test_no_module_is_over_400_lines_once_formatted(tmp_path):
    """Measured as `ruff format` writes the module with every `# fmt: skip` taken out: a
    limit met by packing lines is not met."""
    copy = tmp_path / "ways_sensors"
    for p in PACKAGE.rglob("*.py"):
        out = copy / p.relative_to(PACKAGE)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(p.read_text(encoding="utf-8").replace("# fmt: skip", ""))
    r = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--quiet", "--line-length", "100", str(copy)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    sizes = {
        str(p.relative_to(tmp_path)): len(p.read_text(encoding="utf-8").splitlines())
        for p in copy.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found, every module of it
    over = {name for name, n in sizes.items() if n > MAX_LINES}
    assert over == set(), f"split these (each over {MAX_LINES} lines): {over}"


def test_no_format_skip_or_noqa_without_a_reason_on_its_line():
    bare = re.compile(r"#\s*(fmt:\s*(skip|off)|noqa(:\s*[A-Z0-9]+(,\s*[A-Z0-9]+)*)?)\s*$")
    found = [
        f"{p.relative_to(PACKAGE.parent)}:{n}"
        for p in PACKAGE.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line)
    ]
    assert found == []


def test_the_package_root_holds_the_entry_points_and_a_few_shared_leaves():
    """The core lives in rooms (state/, config/, pipeline/, dispatch/ ...): the root
    keeps the entry points and the leaves everything shares, at most MAX_ROOT."""
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT, root
    assert {"cli.py", "hook.py", "errors.py", "records.py"} <= set(root)


def modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, statement by statement; `from . import
    x` names the module x when there is one, else the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            if node.level == 0:
                base = node.module or ""
            elif node.module:
                base = base + "." + node.module
            targets = [base + "." + a.name for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_cycle():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert graph["ways_sensors.dispatch.worker"] >= {
        "ways_sensors.dispatch.journal"
    }  # the parse sees imports
    assert cycles(graph) == []


def room_of(name: str) -> str:
    """A module of the package root is a room of its own; a folder is one room."""
    parts = name.split(".")
    return ".".join(parts[:2])


def test_rooms_import_one_way():
    """Folders as rooms, with the root's modules each a room: no circle among them, so
    every arrow runs down (no import from a lower floor to a higher one)."""
    known = modules()
    rooms: dict[str, set[str]] = {}
    for name, path in known.items():
        here = room_of(name)
        rooms.setdefault(here, set())
        rooms[here] |= {room_of(t) for t in imports(name, path, known)} - {here}
    assert {"ways_sensors.state", "ways_sensors.dispatch"} <= set(rooms)
    assert "ways_sensors.state" in rooms["ways_sensors.dispatch"]  # the parse sees rooms
    assert cycles(rooms) == []


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_test_module_imports_another():
    """What tests share lives in support modules (helpers, servers, victims, conftest):
    a test module importing another runs, and breaks with, that module's fixtures."""
    tests = Path(__file__).resolve().parent
    offenders = []
    for path in tests.rglob("test_*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.rsplit(".", 1)[-1]
                if last.startswith("test_"):
                    offenders.append(f"{path.relative_to(tests)}: from {node.module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.rsplit(".", 1)[-1].startswith("test_"):
                        offenders.append(f"{path.relative_to(tests)}: import {alias.name}")
    assert offenders == []
