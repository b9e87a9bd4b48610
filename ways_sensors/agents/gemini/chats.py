"""Reading a Gemini CLI chat file (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`).

One file per session, resumes included (a resume in a later minute may also leave a
short second file: files are matched by the session id inside, the longest wins).
Three kinds of line (Gemini CLI 0.61):

    {sessionId, projectHash, startTime, lastUpdated, kind}     a header: a process
                                                                (re)opened the session
    {id, timestamp, type: user|gemini|info|error, content,     a message; a gemini one is
     thoughts, tokens, model, toolCalls: [{id, name, args,      written again, same id,
     result: [{functionResponse: {response: {output}}}],        once its tool calls ran
     status, resultDisplay}]}
    {"$set": {...}}                                             a patch: lastUpdated, the
                                                                message list, sessionId

A compression restarts the chat: Gemini re-opens its recording, which writes a
`{"$set": {"sessionId": ...}}` (a restart). A resumed process writes one restart of
its own right after its header, before its first prompt; any other restart is a
compression. `compressed_after` reads whether one came between a PreCompress (the chat
file's size then) and the next message; the replay counts restarts per header.
Thoughts are never read.

A reply's tokens (`turn_usage`): each `gemini` message is one model call, and its
`tokens` are the API's usageMetadata as Gemini CLI keeps them: `input`
(promptTokenCount, cached tokens included), `cached` (cachedContentTokenCount),
`output` (candidatesTokenCount), `thoughts` (thoughtsTokenCount, billed as output),
`tool` (toolUsePromptTokenCount, billed as input), `total`. A turn's calls are the
gemini messages after its prompt (the last `user` message that is neither a tool's
response nor the `<session_context>` block), each counted once (a message is written
again, same id, once its tool calls ran); messages inside `$set` patches (a resume's or
a compression's copy of the history) are never counted.
"""

from __future__ import annotations

import os

from ...sha import sha256_hex
from ..kit.sessionfile import ReadStats, decode_line, first_line, next_line, read_at, read_lines
from ..kit.sessionfile import iter_lines as iter_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    Payload = tuple[str, dict[str, Any], int]  # (event, payload, chat size before the line)

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
LOOK_AHEAD = 1 << 20
MAX_HEAD = 8 << 20  # a turn's reading starts at most this far before its end
MAX_CALLS = 8  # read_lines calls a turn's reading takes at most (about MAX_READ each)
TOKENS = ("input", "cached", "output", "thoughts", "tool")


def is_header(obj: dict[str, Any]) -> bool:
    return "sessionId" in obj and "projectHash" in obj and "$set" not in obj


def is_message(obj: dict[str, Any]) -> bool:
    return obj.get("type") in MESSAGE_TYPES and isinstance(obj.get("id"), str)


def is_restart(obj: dict[str, Any]) -> bool:
    patch = obj.get("$set")
    return isinstance(patch, dict) and "sessionId" in patch


def compressed_after(path: str, offset: int) -> bool | None:
    """Whether the chat restarted (compressed) after `offset` before its next message or
    header; None while neither has been written. Reads at most LOOK_AHEAD bytes: the
    answer is in the first few lines. None too when it cannot be read (a path that is
    no regular file is never waited on: agents/kit/sessionfile.py)."""
    data = read_at(path, offset, LOOK_AHEAD)
    if data is None:
        return None
    objs = [o for line in data.split(b"\n")[:-1] for o in decode_line(line)]
    for obj in objs:
        if is_restart(obj):
            return True
        if is_message(obj) or is_header(obj):
            return False
    return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def is_prompt(obj: dict[str, Any]) -> bool:
    """A user's prompt: a `user` message neither a tool's response nor the context block."""
    content = obj.get("content")
    return (
        obj.get("type") == "user"
        and not _is_tool_response(content)
        and not text_of(content).lstrip().startswith("<session_context>")
    )


def turn_usage(
    path: str, offset: int, limit: int, stats: ReadStats | None = None
) -> tuple[dict[str, Any] | None, str | None, int]:
    """(usage, model, offset) of the turn that ends at `limit` (the chat file's size
    when its AfterAgent ran), read from `offset` (where the last reading stopped; -1:
    none; never more than MAX_HEAD before `limit`); the offset is where to read on from.
    The usage is written as Claude Code's (docs/records.md): `input_tokens` without the
    cached ones, `cache_read_input_tokens`, `cache_creation_input_tokens` (0: Gemini
    reports none), `output_tokens` (thoughts included), `api_calls`, and `models` when
    the calls named more than one (Gemini CLI's model routing: then no single price
    applies, pricing.py says so). The model is the last call's. None, None: no call of
    the turn was read. Raises OSError as sessionfile.read_lines does."""
    if offset < 0 or offset > limit or limit - offset > MAX_HEAD:
        offset = next_line(path, limit - MAX_HEAD) if limit > MAX_HEAD else 0
    calls: dict[str, tuple[list[int], str | None]] = {}
    for _ in range(MAX_CALLS):
        lines = read_lines(path, offset, stats, limit)
        for end, objs in lines:
            offset = end
            for obj in objs:
                if not is_message(obj):
                    continue
                if is_prompt(obj):
                    calls.clear()  # a later turn's prompt: what came before was not its
                elif obj.get("type") == "gemini" and isinstance(obj.get("tokens"), dict):
                    t, m = obj["tokens"], obj.get("model")
                    row = [_count(t.get(k)) for k in TOKENS]
                    calls[obj["id"]] = (row, m if isinstance(m, str) and m else None)
        if not lines or offset >= limit:
            break
    if not calls:
        return None, None, offset
    inp, cached, out, thoughts, tool = (
        sum(row[i] for row, _ in calls.values()) for i in range(len(TOKENS))
    )
    usage: dict[str, Any] = {
        "input_tokens": max(0, inp + tool - cached),
        "output_tokens": out + thoughts,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
        "api_calls": len(calls),
    }
    models = list(dict.fromkeys(m for _, m in calls.values() if m))
    if len(models) > 1:
        usage["models"] = models
    return usage, list(calls.values())[-1][1], offset


def text_of(content: Any) -> str:
    """A message's text parts (never thoughts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
        )
    return ""


def _is_tool_response(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and "functionResponse" in p for p in content
    )


def tool_response(call: dict[str, Any]) -> dict[str, Any]:
    """A recorded tool call's result, in AfterTool's `tool_response` shape."""
    outputs = []
    for r in call.get("result") or []:
        fr = r.get("functionResponse") if isinstance(r, dict) else None
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            out = resp.get("output", resp.get("error"))
            if isinstance(out, str):
                outputs.append(out)
    body: dict[str, Any] = {
        "llmContent": "\n".join(outputs),
        "returnDisplay": call.get("resultDisplay"),
    }
    if call.get("status") in ("error", "cancelled"):
        body["error"] = {"message": "\n".join(outputs) or call["status"]}
    return body


class Replayer:
    """Turns chat file lines into the hook payloads Gemini CLI would have sent."""

    def __init__(self) -> None:
        self.seen_messages: set[str] = set()
        self.seen_calls: set[str] = set()
        self.processes = 0
        self.prompt: str | None = None
        self.replies: list[str] = []
        self.restarts = 0  # since the last header

    def payloads(self, obj: dict[str, Any], size: int) -> Iterator[Payload]:
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if is_header(obj):
            yield from self.end_turn(size)
            self.processes += 1
            self.restarts = 0
            source = "startup" if self.processes == 1 else "resume"
            yield "SessionStart", {"source": source, "timestamp": obj.get("startTime")}, size
            return
        if is_restart(obj):
            self.restarts += 1
            if self.restarts > (1 if self.processes > 1 else 0):  # not a resume's own
                yield "PreCompress", {"trigger": "auto"}, size
            return
        if not is_message(obj):
            return
        mid, kind = obj["id"], obj.get("type")
        if kind == "user" and mid not in self.seen_messages:
            self.seen_messages.add(mid)
            content = obj.get("content")
            text = text_of(content)
            if _is_tool_response(content) or text.lstrip().startswith("<session_context>"):
                return
            yield from self.end_turn(size)
            self.prompt = text
            yield "BeforeAgent", {"prompt": text, "timestamp": ts}, size
        elif kind == "gemini":
            if mid not in self.seen_messages:
                self.seen_messages.add(mid)
                text = text_of(obj.get("content"))
                if text:
                    self.replies.append(text)
            for call in obj.get("toolCalls") or []:
                if not isinstance(call, dict) or call.get("id") in self.seen_calls:
                    continue
                self.seen_calls.add(str(call.get("id")))
                base = {"tool_name": call.get("name"), "tool_input": call.get("args")}
                when = call.get("timestamp") if isinstance(call.get("timestamp"), str) else ts
                yield "BeforeTool", {**base, "timestamp": when}, size
                yield (
                    "AfterTool",
                    {**base, "tool_response": tool_response(call), "timestamp": when},
                    size,
                )

    def end_turn(self, size: int) -> Iterator[Payload]:
        """The AfterAgent of a turn that had a reply."""
        if self.prompt is not None and self.replies:
            yield (
                "AfterAgent",
                {"prompt": self.prompt, "prompt_response": "\n".join(self.replies)},
                size,
            )
        self.prompt, self.replies = None, []


def gemini_home() -> str:
    """`~/.gemini`, where `~` is $GEMINI_CLI_HOME when set (as Gemini CLI reads it)."""
    return os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def _header(path: str) -> dict[str, Any]:
    objs = decode_line(first_line(path))
    return objs[0] if objs and is_header(objs[0]) else {}


def find_chat(session: str | None, project: str | None) -> str | None:
    """The chat file of `session` (the longest of its files), or the newest one of
    `project` (its header's projectHash is the sha256 of the project's path)."""
    root = os.path.join(gemini_home(), "tmp")
    files: list[str] = []
    for dirpath, _, names in os.walk(root):
        if os.path.basename(dirpath) == "chats":
            files.extend(os.path.join(dirpath, n) for n in names if n.endswith((".jsonl", ".json")))
    if session:
        mine = [f for f in files if session[:8] in os.path.basename(f)]
        mine = [f for f in mine if _header(f).get("sessionId") == session]
        return max(mine, key=os.path.getsize) if mine else None
    want = sha256_hex(os.path.realpath(project or ".").encode())
    mine = [f for f in files if _header(f).get("projectHash") == want]
    return max(mine, key=os.path.getmtime) if mine else None
