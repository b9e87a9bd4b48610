"""Reading a Codex rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`).

One JSON object a line, `{timestamp, type, payload}`, one file per session, resumes
included. The lines this module reads (Codex 0.169; older names in brackets):

    event_msg      {type: item_completed, turn_id, item: {type: UserMessage, content}}
                   [{type: user_message, message}]
    event_msg      {type: item_completed, item: {type: CommandExecution, id: <call id>,
                    command, exit_code, status: completed|failed}}
                   [{type: exec_command_end, call_id, exit_code}]
                   [{type: patch_apply_end, call_id, success}]
    event_msg      {type: task_complete, turn_id, last_agent_message}
    event_msg      {type: task_started, turn_id}
    event_msg      {type: token_count, info: {last_token_usage: {input_tokens,
                    cached_input_tokens, cache_write_input_tokens, output_tokens}}}:
                   one model call's tokens, counted to the turn last started (TurnUsage)
    response_item  {type: function_call, name, arguments (JSON text), call_id}
                   {type: custom_tool_call, name, input, call_id}
    response_item  {type: function_call_output | custom_tool_call_output, call_id,
                    output: "...Process exited with code N..."}
    compacted      a compaction of the history

Reasoning items (`reasoning`, `Reasoning` summaries) are never read. The reading
itself (regular files only, within bounds; broken lines skipped alone, incomplete
tails left for later) is the agent kit's (agents/kit/sessionfile.py).
"""

from __future__ import annotations

import os

from ... import jsoncore
from ...regex import Lazy
from ..kit.sessionfile import ReadStats, decode_line, first_line, next_line, read_from
from ..kit.sessionfile import iter_lines as iter_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    # [exit code or None, status or None]: never the command's output (it stays at rest in
    # the build cursor; the record's `output` and `error` come from the hook's payload)
    Outcome = list[Any]
    Payload = tuple[str, dict[str, Any]]  # a replayed hook payload

FAILED = frozenset({"failed", "declined", "error", "errored", "rejected"})
SHELL_TOOLS = frozenset({"exec_command", "shell", "local_shell", "container.exec"})
_EXITED = Lazy(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")
MAX_HEAD = 8 << 20  # a fresh reader starts at most this far from a rollout's end
TAIL = 1 << 20  # what the payload-only path reads to find one call's outcome


def outcome_of(obj: dict[str, Any]) -> tuple[str, Outcome] | None:
    """(call id, outcome) when a rollout line says how a tool call ended."""
    payload = _payload if isinstance(_payload := obj.get("payload"), dict) else {}
    kind, ptype = obj.get("type"), payload.get("type")
    if kind == "event_msg" and ptype == "item_completed":
        item = _item if isinstance(_item := payload.get("item"), dict) else {}
        cid = item.get("id")
        if not isinstance(cid, str) or item.get("type") in ("UserMessage", "AgentMessage"):
            return None
        code = item.get("exit_code")
        status = item.get("status")
        if not isinstance(code, int) and not isinstance(status, str):
            return None
        return cid, [
            code if isinstance(code, int) else None,
            status if isinstance(status, str) else None,
        ]
    if kind == "event_msg" and ptype == "exec_command_end":
        cid, code = payload.get("call_id"), payload.get("exit_code")
        if isinstance(cid, str) and isinstance(code, int):
            return cid, [code, None]
    if kind == "event_msg" and ptype == "patch_apply_end":
        cid = payload.get("call_id")
        if isinstance(cid, str) and isinstance(payload.get("success"), bool):
            return cid, [None, "completed" if payload["success"] else "failed"]
    if kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
        cid, output = payload.get("call_id"), payload.get("output")
        if isinstance(output, dict):
            output = output.get("content") or output.get("output")
        if isinstance(cid, str) and isinstance(output, str):
            m = _EXITED.search(output[:4096])
            if m:
                return cid, [int(m.group(1)), None]
    return None


def failed(outcome: Outcome) -> bool:
    code, status = outcome[0], outcome[1]
    return (isinstance(code, int) and code != 0) or status in FAILED


class TurnUsage:
    """Each turn's tokens, summed from the token_count lines (one a model call) after its
    task_started (those read before any, when a reader starts inside a turn: to the
    turn under way, the next one taken): numbers and turn ids only (they stay at rest in
    the build cursor), the last MAX turns. OpenAI counts cached tokens inside
    input_tokens; a reply's usage is written as Claude Code's (docs/records.md):
    input_tokens without them, beside
    cache_read_input_tokens and cache_creation_input_tokens."""

    MAX = 64
    FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")

    def __init__(self, raw: Any = None) -> None:
        d = raw if isinstance(raw, dict) else {}
        current, turns = d.get("current"), d.get("turns")
        self.current: str | None = current if isinstance(current, str) else None
        self.turns: dict[str, list[int]] = {
            k: list(v)
            for k, v in (turns.items() if isinstance(turns, dict) else ())
            if isinstance(k, str)
            and isinstance(v, list)
            and len(v) == 5
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
        }

    def see(self, obj: dict[str, Any]) -> None:
        p = _p if isinstance(_p := obj.get("payload"), dict) else {}
        if obj.get("type") != "event_msg":
            return
        if p.get("type") in ("task_started", "turn_started") and isinstance(p.get("turn_id"), str):
            self.current = p["turn_id"]
            return
        info = p.get("info") if p.get("type") == "token_count" else None
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict):
            return
        turn = self.current or ""  # read before any task_started: the turn under way
        if turn not in self.turns and len(self.turns) >= self.MAX:
            self.turns.pop(next(iter(self.turns)))
        row = self.turns.setdefault(turn, [0, 0, 0, 0, 0])
        for i, name in enumerate(self.FIELDS):
            v = last.get(name)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                row[i] += v
        row[4] += 1

    def take(self, turn: Any) -> dict[str, int] | None:
        """The turn's usage (and forget it); None when no model call of it was read."""
        rows = [self.turns.pop(turn, None) if isinstance(turn, str) and turn else None]
        rows.append(self.turns.pop("", None))  # calls read before their turn's start
        row = [sum(r[i] for r in rows if r) for i in range(5)]
        total, cached, written, output, calls = row
        if not calls:
            return None
        return {
            "input_tokens": max(0, total - cached - written),
            "output_tokens": output,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": written,
            "api_calls": calls,
        }

    def dump(self) -> dict[str, Any]:
        return {"current": self.current, "turns": self.turns}


def scan(
    path: str, offset: int, stats: ReadStats | None = None, usage: TurnUsage | None = None
) -> tuple[dict[str, Outcome], int]:
    """Outcomes in the rollout's complete lines after `offset`, and the offset after them;
    `usage`, when given, sees every line (the turns' tokens).

    A first read (offset 0) of a long rollout starts MAX_HEAD before its end. Raises
    OSError as sessionfile.read_from does (NotRegularFile: not a regular file)."""
    if offset == 0:
        try:
            size = os.stat(path).st_size
        except OSError:
            return {}, 0
        if size > MAX_HEAD:
            offset = next_line(path, size - MAX_HEAD)
    objs, end = read_from(path, offset, stats)
    found: dict[str, Outcome] = {}
    for obj in objs:
        if usage is not None:
            usage.see(obj)
        got = outcome_of(obj)
        if got and (got[0] not in found or found[got[0]][0] is None):
            found[got[0]] = got[1]
    return found, end


def find_outcome(path: str, call_id: str) -> Outcome | None:
    """One call's outcome from the rollout's last TAIL bytes (the payload-only path);
    None when it is not there, or the rollout cannot be read."""
    try:
        size = os.stat(path).st_size
        found, _ = scan(path, next_line(path, size - TAIL) if size > TAIL else 0)
    except OSError:
        return None
    return found.get(call_id)


# --- replay: a rollout played back as the hook payloads Codex would have sent -----------


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            c.get("text", "")
            for c in content
            if isinstance(c, dict)
            and c.get("type") in ("text", "Text", "input_text")
            and isinstance(c.get("text"), str)
        )
    return ""


def hook_tool(name: Any, arguments: Any) -> tuple[Any, Any]:
    """(tool_name, tool_input) as Codex's hooks report a rollout's function call: shell
    tools as `Bash` with `{"command": ...}`."""
    args: Any = arguments
    if isinstance(arguments, str):
        try:
            args = jsoncore.loads(arguments)
        except ValueError:
            args = arguments
    if name in SHELL_TOOLS and isinstance(args, dict):
        cmd = args.get("cmd", args.get("command"))
        if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
            cmd = cmd[2] if len(cmd) == 3 and cmd[1] in ("-c", "-lc") else " ".join(cmd)
        return "Bash", {"command": cmd}
    return name, args


class Replayer:
    """Turns rollout lines into the hook payloads Codex would have sent, in order."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[Any, Any]] = {}
        self.outputs: dict[str, str] = {}
        self.turn: str | None = None
        self.model: str | None = None
        self.started = False

    def payloads(self, obj: dict[str, Any]) -> Iterator[Payload]:
        kind = obj.get("type")
        p = _p if isinstance(_p := obj.get("payload"), dict) else {}
        ptype = p.get("type")
        if kind == "turn_context" and isinstance(p.get("model"), str):
            self.model = p["model"]
        if not self.started and isinstance(obj.get("timestamp"), str):
            self.started = True
            yield "SessionStart", {"source": "startup", "model": self.model}
        if kind == "event_msg":
            if ptype in ("task_started", "turn_started") and isinstance(p.get("turn_id"), str):
                self.turn = p["turn_id"]
            item = _item if isinstance(_item := p.get("item"), dict) else {}
            if ptype == "item_completed" and item.get("type") == "UserMessage":
                yield (
                    "UserPromptSubmit",
                    {
                        "prompt": _message_text(item.get("content")),
                        "turn_id": p.get("turn_id") or self.turn,
                    },
                )
            elif ptype == "user_message" and isinstance(p.get("message"), str):
                yield "UserPromptSubmit", {"prompt": p["message"], "turn_id": self.turn}
            elif ptype == "item_completed" and isinstance(item.get("aggregated_output"), str):
                self.outputs[str(item.get("id"))] = item["aggregated_output"]
            elif ptype == "task_complete":
                text = p.get("last_agent_message")
                yield "Stop", {"last_assistant_message": text, "turn_id": p.get("turn_id")}
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call"):
            cid = p.get("call_id")
            raw = p.get("arguments") if ptype == "function_call" else {"input": p.get("input")}
            name, tool_input = hook_tool(p.get("name"), raw)
            if isinstance(cid, str):
                self.calls[cid] = (name, tool_input)
            yield (
                "PreToolUse",
                {
                    "tool_name": name,
                    "tool_input": tool_input,
                    "tool_use_id": cid,
                    "turn_id": self.turn,
                },
            )
        elif kind == "response_item" and ptype in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            cid = p.get("call_id")
            name, tool_input = (
                self.calls.get(cid, (None, None)) if isinstance(cid, str) else (None, None)
            )
            response = self.outputs.get(str(cid), p.get("output"))
            yield (
                "PostToolUse",
                {
                    "tool_name": name,
                    "tool_input": tool_input,
                    "tool_use_id": cid,
                    "tool_response": response,
                    "turn_id": self.turn,
                },
            )
        elif kind == "compacted":
            yield "PreCompact", {"trigger": "auto", "turn_id": self.turn}
            yield "PostCompact", {"trigger": "auto", "turn_id": self.turn}


def find_rollout(session: str | None, cwd: str | None = None) -> str | None:
    """The rollout of `session`, or the newest one whose session ran in `cwd`."""
    root = os.path.join(codex_home(), "sessions")
    files: list[str] = []
    for dirpath, _, names in os.walk(root):
        files.extend(os.path.join(dirpath, n) for n in names if n.startswith("rollout-"))
    if session:
        hits = [f for f in files if f.endswith(f"-{session}.jsonl")]
        return hits[0] if hits else None
    for path in sorted(files, key=_mtime, reverse=True)[:200]:
        if cwd is None or _session_cwd(path) == os.path.realpath(cwd):
            return path
    return None


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def session_meta(path: str) -> dict[str, Any]:
    """The payload of the rollout's first line when it is the session_meta."""
    for obj in decode_line(first_line(path)):
        p = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(p, dict):
            return p
    return {}


def _session_cwd(path: str) -> str | None:
    cwd = session_meta(path).get("cwd")
    return os.path.realpath(cwd) if isinstance(cwd, str) else None
