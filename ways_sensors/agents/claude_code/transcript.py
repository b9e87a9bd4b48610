"""What Claude Code's transcript lines are (`~/.claude/projects/<project>/<session>.jsonl`).

The format is undocumented and written while we read it; the reading itself, within
bounds and robust to broken lines, is the agent kit's (agents/kit/sessionfile.py),
shared with Codex and Gemini CLI. This module says what a line is: a message's text,
and what kind of `user` line it is. What they mean for records is decided in
tracker.py and replay.py, so the dispatcher and `ways sensors test` share it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INTERRUPT_MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
_NOT_PROMPT_PREFIXES = (
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<command-stdout>",
)


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
    msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
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
