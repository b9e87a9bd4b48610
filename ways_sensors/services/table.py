"""Aligned tables and colour for people; colour only on a terminal without NO_COLOR.

Every human output escapes control characters (`printable`, and the `Escaping` stream
cli.py puts around stdout and stderr): a sensor file's name or fields come from
whatever repository was cloned, and an escape sequence in them (a pane title, a
cleared screen, OSC 52 writing the clipboard) must reach the terminal as text, not as
a command, even from a project that is not allowed. Each C0 control but newline and
tab, DEL and each C1 control becomes `\\u00XX`, which is also how JSON spells it, so
`--json` output parses to the same values. Only the colour codes `paint` writes pass,
recognised by a mark content cannot hold (a colour code inside a record or a rule's
name is escaped like any other control).
"""

from __future__ import annotations

import io
import os
import re
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# `paint`'s codes carry a mark no content can hold (random, per process, and made of
# characters `printable` escapes): Escaping passes a marked code, without its mark, and
# escapes every other control, a colour code from a record or a sensor file included
_MARK = "\x00" + os.urandom(8).hex() + "\x00"
_PAINT = re.compile(re.escape(_MARK) + "(\x1b\\[(?:0|1|2|31|32|33)m)")


def _u(m: re.Match[str]) -> str:
    return "\\u%04x" % ord(m.group())


def printable(text: str) -> str:
    """`text` with every control character but newline and tab spelled `\\u00XX`."""
    return _CONTROL.sub(_u, text)


def printable_line(text: str) -> str:
    """`printable`, newlines and tabs included: one value on one line."""
    return printable(text).replace("\n", "\\u000a").replace("\t", "\\u0009")


class Escaping(io.TextIOBase):
    """A text stream that writes through to `raw` with control characters escaped,
    except the colour codes `paint` writes."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, s: str) -> int:
        if _CONTROL.search(s):
            parts = _PAINT.split(s)  # text, code, text, code, ..., text
            out = [printable(p) if i % 2 == 0 else p for i, p in enumerate(parts)]
            self.raw.write("".join(out))
        else:
            self.raw.write(s)
        return len(s)

    def writelines(self, lines: object) -> None:
        for line in lines:  # type: ignore[attr-defined]
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding

    @property
    def buffer(self) -> object:
        return self.raw.buffer


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
    return f"{_MARK}\x1b[{codes[colour]}m{text}{_MARK}\x1b[0m"


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
