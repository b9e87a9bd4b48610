"""Comments say why the code is as it is; measured figures live in bench/RESULTS.md and
history in git log (issue 34, item 7). A figure restated in a comment goes stale the day
the code or the machine changes, and nothing checks it there."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ways_sensors"

# how a measure reads in prose: "about 3 ms", "~20 us", "some 400 KB", "four times as
# fast", "6x faster". A constant's own value ("200ms", "10 s cap") carries no "about".
MEASURE = re.compile(
    r"(\babout|~|\bsome|\bnearly|\balmost) ?\d[\d,.]* ?(ms|us|µs|s|%|MiB|KiB|MB|KB)\b"
    r"|\btimes (as fast|faster)\b|\b\d+(\.\d+)?x faster\b"
)
# a docstring telling what the code was, not what it is and why
DIARY = re.compile(r"\bused to (hold|poll|be)\b|\bthan before\b|\bbefore this registry\b")


@functools.cache  # both tests read every module: tokenized and parsed once
def prose(path: Path) -> list[tuple[int, str]]:
    """Every comment and docstring of a module, with the line it starts on."""
    src = path.read_text(encoding="utf-8")
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(src).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((node.body[0].lineno, doc))
    return out


def offenders(pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{p.relative_to(PACKAGE.parent)}:{line}: {m.group(0)!r}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for line, text in prose(p)
        for m in pattern.finditer(text)
    ]


def test_no_comment_or_docstring_restates_a_measured_figure():
    assert offenders(MEASURE) == []


def test_no_docstring_is_a_diary_entry():
    assert offenders(DIARY) == []


def test_the_finders_see_a_figure_and_a_diary_entry_where_they_stand(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text(
        '"""A module.\n\nIt used to hold a thread per rule."""\n\n'
        "import _thread  # threading's, without its import: ~1 ms of a hook\n\n\n"
        "def f():\n"
        '    """Four times as fast; the default 200ms stays."""\n'
    )
    texts = prose(mod)
    found = [m.group(0) for _, t in texts for m in MEASURE.finditer(t)]
    assert found == ["~1 ms", "times as fast"]
    assert [m.group(0) for _, t in texts for m in DIARY.finditer(t)] == ["used to hold"]
