"""One vocabulary for tools across agents: `data.tool_kind`, and the command at `data.command`.

Every agent names its tools its own way (Claude Code `Bash`, Codex `Bash` in hooks but
`exec_command` in its rollout, Gemini CLI `run_shell_command`, Cursor `Shell`, Copilot
CLI `bash`), and puts a shell command under its own key (`command`, `cmd`, an argv
list). So a rule can say `where: {data.tool_kind: shell}` once for every agent, each
tool_call and tool_result record carries, beside the agent's own `tool_name`:

    data.tool_kind   one of KINDS
    data.command     the shell command as one string, when tool_kind is shell and the
                     input names one

Each adapter holds its own name -> kind table (Claude Code's is here, being the shape
Cursor and Copilot CLI borrow); `describe` applies one. MCP tools are recognised by
name shape for every agent (`mcp__server__tool`, Cursor's `MCP:server:tool`). The
mapping of every agent is tabled in docs/agents.md.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

KINDS = ("shell", "read", "edit", "write", "search", "web", "mcp", "agent", "other")

# Claude Code's tools (docs.claude.com tools reference); names it does not list: other
CLAUDE_CODE: Mapping[str, str] = {
    "Bash": "shell",
    "BashOutput": "shell",
    "KillShell": "shell",
    "KillBash": "shell",
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Write": "write",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "web",
    "WebSearch": "web",
    "Task": "agent",
    "Agent": "agent",
}

# keys a shell tool's input may hold its command under, in the order they are tried
_COMMAND_KEYS = ("command", "cmd", "commandLine", "command_line", "script")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell"})


def is_mcp(tool_name: str) -> bool:
    return tool_name.startswith("mcp__") or tool_name.startswith("MCP:")


def kind_of(tool_name: Any, table: Mapping[str, str]) -> str:
    """The tool's kind by the agent's table; MCP tools by their name's shape."""
    if not isinstance(tool_name, str):
        return "other"
    if is_mcp(tool_name):
        return "mcp"
    return table.get(tool_name, "other")


def _argv_command(argv: list[Any]) -> str | None:
    """`["/bin/bash", "-lc", "ls -la"]` -> "ls -la"; any other argv joined by spaces."""
    if not argv or not all(isinstance(a, str) for a in argv):
        return None
    shell = argv[0].rsplit("/", 1)[-1]
    words = [str(a) for a in argv]  # all str, checked above
    if shell in _SHELLS and len(words) == 3 and words[1] in ("-c", "-lc", "-ic", "-Command"):
        return words[2]
    return " ".join(words)


def shell_command(tool_input: Any) -> str | None:
    """The command line a shell tool's input names, as one string; None if none."""
    if isinstance(tool_input, str):
        return tool_input or None
    if not isinstance(tool_input, dict):
        return None
    for key in _COMMAND_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list):
            return _argv_command(value)
    return None


def describe(tool_name: Any, tool_input: Any, table: Mapping[str, str]) -> dict[str, Any]:
    """`{"tool_kind": ...}`, plus `"command"` for a shell tool whose input names one."""
    kind = kind_of(tool_name, table)
    out: dict[str, Any] = {"tool_kind": kind}
    if kind == "shell":
        command = shell_command(tool_input)
        if command is not None:
            out["command"] = command
    return out
