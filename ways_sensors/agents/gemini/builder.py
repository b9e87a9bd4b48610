"""Gemini CLI hook payloads to Drafts: one handler per event, and what Gemini leaves out, recovered.

* Failures. A failing command is an ordinary AfterTool; its exit code is only inside
  `tool_response.llmContent` (`Exit Code: 3`, only when non-zero; `Signal: ...` when
  killed). Such a result, or one with `tool_response.error`, is `status: failure`, with
  `exit_code` and `error`.
* Pairing. BeforeTool and AfterTool carry no tool-call id: pairing.CallQueue gives each
  call a synthetic `tool_use_id` and pairs results by order within the turn (a turn
  starts at BeforeAgent).
* Compressions. PreCompress fires before every model call, compressed or not. The hook
  notes the chat file's size at PreCompress; the PreCompress is held in the builder's
  state until a later event of the session, when chats.compressed_after reads whether
  the chat restarted after it: only then are `compaction` records (before, after, both
  at the PreCompress's time) made; a PreCompress that compressed nothing makes none.
  Without a chat file (the blocking path, `ways sensors fire`, or a path that is no
  regular file, logged content-free by agents/kit/building.py) only a manual
  PreCompress makes one.
* Replies. AfterAgent's `prompt_response` is the turn's reply, exported once; AfterModel
  (one per streamed chunk, with the model's thinking) is never read. The reply's model
  and tokens come from the chat file (chats.turn_usage: its calls' `tokens`, read up to
  the file's size when AfterAgent ran, which the hook notes), priced by the dispatcher.

What stays at rest (the build cursor): the tool-call queue's ids, a held PreCompress's
trigger, time and chat-file offset, and the chat file's path and the offset its tokens
were read to; never a prompt, a reply or a token of content.

The record time is the payload's own `timestamp`.
"""

from __future__ import annotations

from ... import jsoncore
from ...records import Draft
from ...regex import MULTILINE, Lazy
from ..drafting import Drafts, event_time, extra, text_or_empty, tool_data
from ..kit import building, sessionfile
from ..kit.building import guarded
from ..pairing import CallQueue
from . import NAME, chats

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMMON = frozenset({"session_id", "hook_event_name", "timestamp"})
MAX_HELD = 64

# Gemini CLI 0.61's built-in tools; MCP tools are told by their `mcp_context`
TOOL_KINDS = {
    "run_shell_command": "shell",
    "read_file": "read",
    "read_many_files": "read",
    "read_mcp_resource": "read",
    "get_internal_docs": "read",
    "replace": "edit",
    "edit": "edit",
    "write_file": "write",
    "glob": "search",
    "grep_search": "search",
    "search_file_content": "search",
    "list_directory": "search",
    "list_mcp_resources": "search",
    "web_fetch": "web",
    "google_web_search": "web",
    "invoke_agent": "agent",
    "delegate_to_agent": "agent",
    "complete_task": "agent",
}
_EXIT = Lazy(r"^\[?Exit Code: (-?\d+)\]?\s*$", MULTILINE)
_SIGNAL = Lazy(r"^Signal: (?!\(none\))(\S+)", MULTILINE)
_ERROR = Lazy(r"^Error: (?!\(none\))(.+)$", MULTILINE)


class Builder:
    """Turns one Gemini CLI session's spool entries into drafts (SessionBuilder)."""

    def __init__(self, state: str | None = None, transcript: bool = True) -> None:
        s = jsoncore.loads(state) if state else {}
        self.transcript = transcript
        self.calls = CallQueue.from_dict("gemini", s.get("calls"))
        self.held: list[dict[str, Any]] = list(s.get("held", []))  # PreCompress, undecided
        chat, read = s.get("chat"), s.get("read")  # where the replies' tokens were read to
        self.chat: str | None = chat if isinstance(chat, str) else None
        self.read = read if isinstance(read, int) and not isinstance(read, bool) else -1
        self._size = -1
        self.stats = sessionfile.ReadStats()  # this process's reading, for the logs only

    def state(self) -> str:
        """Content-free (the module docstring): ids, offsets, a trigger, a time."""
        state = {"calls": self.calls.to_dict(), "held": self.held}
        return jsoncore.dumps({**state, "chat": self.chat, "read": self.read})

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        handler = HANDLERS.get(event)
        if handler is None:
            return []
        drafts = Drafts(NAME, event, event_time(payload.get("timestamp"), ts_ns))
        self._size = transcript_size  # the chat file's size when the hook ran
        out = self._decide(drafts, final=event == "SessionEnd")
        out.extend(handler(self, payload, drafts))
        return out

    # --- compressions ---------------------------------------------------------------------

    def _decide(self, drafts: Drafts, final: bool) -> list[Draft]:
        """Compaction records of the held PreCompress events the chat file now decides."""
        out, kept = [], []
        for h in self.held:
            done = chats.compressed_after(h["path"], h["offset"])
            if done is None and not final:
                kept.append(h)
                continue
            if done:
                out.extend(self._compaction(h, drafts))
        self.held = kept
        return out

    def _compaction(self, h: dict[str, Any], drafts: Drafts) -> list[Draft]:
        before = drafts(
            "compaction",
            {"phase": "before", "trigger": h["trigger"], "instructions": None, "extra": h["extra"]},
            hook_event="PreCompress",
            timestamp=h["ts"],
        )
        after = drafts(  # at the PreCompress's time too, not that of the event that read
            "compaction",  # the chat file (which depends on what else rules select)
            {"phase": "after", "trigger": h["trigger"], "instructions": None, "extra": {}},
            hook_event="PreCompress",
            timestamp=h["ts"],
        )
        return [before, after]

    def pre_compress(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        path, size = p.get("transcript_path"), self._size
        h = {
            "trigger": p.get("trigger"),
            "ts": drafts.timestamp,
            "extra": _extra(p, {"trigger"}),
            "path": path,
            "offset": size,
        }
        readable = isinstance(path, str) and path and size >= 0 and self.transcript
        if readable and guarded(p, self.stats, lambda: sessionfile.check(str(path)), False):
            self.held = [*self.held[-(MAX_HELD - 1) :], h]
            return []
        if p.get("trigger") == "manual":  # asked for: no chat file to say otherwise
            return self._compaction(h, drafts)
        return []

    # --- one method per hook event ----------------------------------------------------

    def before_agent(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        self.calls.new_turn(drafts.timestamp)
        return [drafts("user_prompt", {"prompt": p.get("prompt"), "extra": _extra(p, {"prompt"})})]

    def after_agent(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        data: dict[str, Any] = {"text": text_or_empty(p.get("prompt_response"))}
        usage, model = self._turn_usage(p)
        if model:
            data["model"] = model
        if usage:  # the turn's model calls, from the chat file (priced by the dispatcher)
            data["usage"] = usage
        data["extra"] = _extra(p, {"prompt_response", *data})
        return [drafts("assistant_response", data)]

    def _turn_usage(self, p: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        path, size = p.get("transcript_path"), self._size
        if not (self.transcript and isinstance(path, str) and path and size >= 0):
            return None, None
        if path != self.chat:
            self.chat, self.read = path, -1

        def read() -> tuple[dict[str, Any] | None, str | None]:
            usage, model, self.read = chats.turn_usage(path, self.read, size, self.stats)
            return usage, model

        none: tuple[dict[str, Any] | None, str | None] = (None, None)
        return guarded(p, self.stats, read, none)

    def before_tool(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), p.get("tool_input")
        data = _tool_data(p, self.calls.call(name, tool_input))
        data["input"] = tool_input
        data["extra"] = _extra(p, {"tool_name", "tool_input"})
        return [drafts("tool_call", data)]

    def after_tool(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), p.get("tool_input")
        data = _tool_data(p, self.calls.result(name, tool_input))
        response = p.get("tool_response")
        data.update(outcome(response, data["tool_kind"] == "shell"))
        data["output"] = response
        data["extra"] = _extra(p, {"tool_name", "tool_response"})
        return [drafts("tool_result", data)]

    def session_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_start", building.session_start(p, _extra, model=False))]

    def session_end(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_end", building.session_end(p, _extra))]


def _extra(p: dict[str, Any], used: set[str]) -> dict[str, Any]:
    return extra(p, used, COMMON)


def _tool_data(p: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    name = p.get("tool_name")
    data = tool_data(name, tool_use_id, p.get("tool_input"), TOOL_KINDS)
    mcp = p.get("mcp_context")
    if isinstance(mcp, dict):  # an MCP tool, whatever its name
        data["tool_kind"] = "mcp"
        data["mcp_server"], data["mcp_tool"] = mcp.get("server_name"), mcp.get("tool_name")
        data.pop("command", None)
    return data


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_content_text(c) for c in content)
    text = content.get("text") if isinstance(content, dict) else None
    return text if isinstance(text, str) else ""


def outcome(response: Any, shell: bool) -> dict[str, Any]:
    """`status` (and `exit_code`, `error` for a failure) of an AfterTool's tool_response."""
    if not isinstance(response, dict):
        return {"status": "success"}
    display = response.get("returnDisplay")
    display = display if isinstance(display, str) else ""
    err = response.get("error")
    if err:
        message = err.get("message") if isinstance(err, dict) else err
        return {"status": "failure", "error": str(message) if message else display}
    if not shell:
        return {"status": "success"}
    text = _content_text(response.get("llmContent"))
    code = _EXIT.search(text)
    if code and int(code.group(1)) != 0:
        n = int(code.group(1))
        return {"status": "failure", "exit_code": n, "error": _error(f"Exit code {n}", display)}
    signal = _SIGNAL.search(text)
    if signal:
        return {"status": "failure", "error": _error(f"Signal {signal.group(1)}", display)}
    spawn = _ERROR.search(text)
    if spawn:
        return {"status": "failure", "error": _error(spawn.group(1), display)}
    return {"status": "success"}


def _error(head: str, display: str) -> str:
    return head + ("\n" + display.rstrip("\n") if display else "")


# hook event -> its handler: the only events the builder knows
HANDLERS: dict[str, Callable[[Builder, dict[str, Any], Drafts], list[Draft]]] = {
    "BeforeAgent": Builder.before_agent,
    "AfterAgent": Builder.after_agent,
    "BeforeTool": Builder.before_tool,
    "AfterTool": Builder.after_tool,
    "PreCompress": Builder.pre_compress,
    "SessionStart": Builder.session_start,
    "SessionEnd": Builder.session_end,
}
