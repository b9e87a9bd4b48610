"""Aligned tables and colour for people; colour only on a terminal without NO_COLOR."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO


def use_colour(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    return (
        "NO_COLOR" not in os.environ
        and hasattr(stream, "isatty")
        and stream.isatty()
        and os.environ.get("TERM") != "dumb"
    )


def paint(text: str, colour: str, stream: TextIO | None = None) -> str:
    codes = {"red": "31", "yellow": "33", "green": "32", "dim": "2", "bold": "1"}
    if not use_colour(stream):
        return text
    return f"\x1b[{codes[colour]}m{text}\x1b[0m"


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; the last column is not padded."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def show(value: Any) -> str:
    """A value as one line for a person: JSON for lists and mappings, YAML's words
    for booleans and null."""
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
