"""Reading Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`) robustly.

The format is undocumented and written while we read it, so (reference §4.11):
a line that does not parse is skipped without losing its neighbours; two objects on
one line are split with `raw_decode`; NUL padding is dropped; only complete lines
(ending in a newline) are consumed, so a half-written last line is read later, whole;
unknown types and fields are ignored; order is file order, never timestamps.

This module only turns bytes into objects and classifies lines; what they mean for
records is decided in tracker.py and replay.py, so the dispatcher and `ways sensors
test` share it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_decoder = json.JSONDecoder()
INTERRUPT_MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
_NOT_PROMPT_PREFIXES = (
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<command-stdout>",
)


@dataclass
class ReadStats:
    lines: int = 0
    objects: int = 0
    malformed: int = 0


def decode_line(line: bytes, stats: ReadStats | None = None) -> list[dict[str, Any]]:
    """The JSON objects on one line: usually one, two when writes collided, none if broken."""
    text = line.replace(b"\x00", b"").decode("utf-8", "replace").strip()
    if not text:
        return []
    if stats:
        stats.lines += 1
    try:
        obj = json.loads(text)
        out = [obj] if isinstance(obj, dict) else []
    except (ValueError, RecursionError):
        out = []
        pos = 0
        while pos < len(text):
            while pos < len(text) and text[pos] in " \t\r":
                pos += 1
            if pos >= len(text):
                break
            try:
                obj, end = _decoder.raw_decode(text, pos)
            except (ValueError, RecursionError):
                if stats:
                    stats.malformed += 1
                break
            if isinstance(obj, dict):
                out.append(obj)
            pos = end
    if stats:
        stats.objects += len(out)
    return out


def read_from(
    path: str, offset: int = 0, stats: ReadStats | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Objects of the complete lines after `offset`, and the offset after the last one.

    A missing file gives ([], offset).
    """
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    objs: list[dict[str, Any]] = []
    for line in data[: end + 1].split(b"\n"):
        objs.extend(decode_line(line, stats))
    return objs, offset + end + 1


def iter_file(path: str, stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Every object of a whole transcript, line by line (lines can be very long)."""
    with open(path, "rb") as f:
        for line in f:
            if line.endswith(b"\n"):  # an incomplete tail is skipped, as a live reader would
                yield from decode_line(line, stats)


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the `text` blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def classify_user(obj: dict[str, Any]) -> str:
    """What a `user` line is: prompt, tool_result, summary, meta, command_output, interrupt."""
    if obj.get("isCompactSummary"):
        return "summary"
    if "toolUseResult" in obj:
        return "tool_result"
    msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    content = msg.get("content")
    if (
        isinstance(content, list)
        and content
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    ):
        return "tool_result"
    if obj.get("isMeta"):
        return "meta"
    text = message_text(content).lstrip()
    if text.startswith(_NOT_PROMPT_PREFIXES):
        return "command_output"
    if text in INTERRUPT_MARKERS or text.startswith(INTERRUPT_MARKERS):
        return "interrupt"
    return "prompt"
