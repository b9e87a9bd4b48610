"""Replaying a recorded Claude Code session as the hook would have seen it.

A transcript (`~/.claude/projects/<encoded project>/<session>.jsonl`, with its
`<session>/subagents/agent-<id>.jsonl`) is turned back into the hook payloads Claude
Code would have sent (UserPromptSubmit, PreToolUse, PostToolUse(Failure), Stop,
SubagentStart/Stop, PreCompact, SessionStart), and those go through the same
`Builder` the dispatcher uses (builder.py): one mapping, not two. The main transcript is
written to a scratch copy line by line as the replay advances, so the builder's own
transcript reading (queued messages, interrupted replies) sees what it would have seen
live. Robustness comes from the kit's reader (agents/kit/sessionfile.py): broken lines
are skipped alone, concatenated objects split, NUL padding dropped, an incomplete tail
ignored, a FIFO or device never waited on.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from ...records import Draft
from ..kit import handed, sessionfile
from ..kit.replaying import Recording, ts_ns
from . import permissions, transcript
from .builder import Builder

AGENT_TOOLS = ("Agent", "Task")
COMMAND_LINES = ("<command-name>", "<local-command-", "This session is being continued")
META_MAX = 1 << 16  # bytes of a subagent's meta.json read
Payload = tuple[str, dict[str, Any]]  # (hook event, payload without the common fields)


def encoded_project(project: str) -> str:
    """Claude Code's folder name for a project: every character outside [A-Za-z0-9]
    becomes '-', per UTF-16 unit (reference section 4.2)."""
    path = os.path.realpath(project)
    out = []
    for ch in path:
        units = 2 if ord(ch) > 0xFFFF else 1
        out.append(ch if re.match(r"[A-Za-z0-9]", ch) else "-" * units)
    name = "".join(out)
    return name if len(name) <= 200 else name[:200]


def projects_root() -> str:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "projects")


def find_transcript(project: str, session: str | None = None) -> str | None:
    """The session's transcript, or the project's newest one."""
    folder = os.path.join(projects_root(), encoded_project(project))
    if not os.path.isdir(folder):
        candidates = [
            os.path.join(projects_root(), d)
            for d in _dirs(projects_root())
            if d.startswith(encoded_project(project)[:200])
        ]
        folder = candidates[0] if candidates else folder
    if session:
        path = os.path.join(folder, session + ".jsonl")
        if os.path.exists(path):
            return path
        for d in _dirs(projects_root()):  # a session id is unique across projects
            path = os.path.join(projects_root(), d, session + ".jsonl")
            if os.path.exists(path):
                return path
        return None
    try:
        files = [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl")]
    except OSError:
        return None
    return max(files, key=os.path.getmtime) if files else None


def _dirs(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)))
    except OSError:
        return []


class Replay:
    """Hook payloads from a transcript, and the drafts the builder makes of them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stats = sessionfile.ReadStats()
        # keyed by the tool_use id as the transcript wrote it, checked or not
        self.calls: dict[Any, tuple[Any, Any, str | None, str | None]] = {}
        self.session_id = os.path.basename(path).rsplit(".", 1)[0]
        self.subagents_dir = os.path.join(os.path.dirname(path), self.session_id, "subagents")
        self.done_agents: set[str] = set()
        self.turn: dict[str, Any] = {}  # the running turn's prompt_id and permission_mode
        self.compact: dict[str, Any] | None = None  # a compaction read, not yet played

    def drafts(self) -> Iterator[Draft]:
        with Recording(Builder(), self.session_id, self.path, "transcript.jsonl") as rec:
            ts, started = 0, False
            for line, objs in sessionfile.iter_lines(self.path, self.stats):
                whole = len(objs) == 1  # the line itself: read again, it is that object
                for obj in objs:
                    ts = ts_ns(obj.get("timestamp"), ts)
                    if not started and isinstance(obj.get("timestamp"), str):
                        started = True  # at the first line that says when
                        yield from rec.build("SessionStart", {"source": "startup"}, ts, 0)
                    if self.compact is not None and not self._compacting(obj):
                        yield from self._build(rec, self._compacted(), ts)
                    yield from self._build(rec, self._before(obj), ts)
                    if whole:  # its objects go to the builder's reader with it
                        rec.copy(line, objs)
                    else:
                        rec.copy(json.dumps(obj).encode() + b"\n")
                    yield from self._build(rec, self._payloads(obj), ts)
            if self.compact is not None:
                yield from self._build(rec, self._compacted(), ts)
            yield from rec.end(ts)  # replies never answered by a Stop

    def _build(self, rec: Recording, payloads: Iterator[Payload], ts: int) -> Iterator[Draft]:
        """Each payload as the client sends it within a turn: with the turn's prompt_id
        and permission mode (the transcript's prompt line names them)."""
        for event, payload in payloads:
            yield from rec.build(event, {**self.turn, **payload}, ts)

    def _before(self, obj: dict[str, Any]) -> Iterator[Payload]:
        """What the client sent before it wrote `obj`: a message typed while the agent
        worked is submitted (UserPromptSubmit, in the running turn) as it leaves the
        input queue, before the queue's `remove` reaches the transcript."""
        content = obj.get("content")
        removed = obj.get("type") == "queue-operation" and obj.get("operation") == "remove"
        typed = isinstance(content, str) and content.strip() and not content.startswith("<")
        if removed and typed and self.turn:
            yield "UserPromptSubmit", {"prompt": content}

    def _compacting(self, obj: dict[str, Any]) -> bool:
        """Whether `obj` is one of the lines the client writes after a compact boundary
        (the summary, the `/compact` command and its output, the context attachments);
        the compaction's instructions, prompt_id and model are read from them."""
        if self.compact is None:
            return False
        att = obj.get("attachment") if obj.get("type") == "attachment" else None
        if isinstance(att, dict):  # the context the client gives the model again
            model = att.get("identity") if att.get("type") == "model" else None
            if isinstance(model, dict) and isinstance(model.get("modelId"), str):
                self.compact["model"] = model["modelId"]  # SessionStart's `model`
            return True
        if obj.get("type") != "user":
            return False
        msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
        text = transcript.message_text(msg.get("content"))
        if not (obj.get("isCompactSummary") or text.lstrip().startswith(COMMAND_LINES)):
            return False
        if isinstance(obj.get("promptId"), str):
            self.turn = {**self.turn, "prompt_id": obj["promptId"]}
        found = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
        if "<command-name>/compact</command-name>" in text and found and found.group(1).strip():
            self.compact["instructions"] = found.group(1).strip()
        return True

    def _compacted(self) -> Iterator[Payload]:
        """A compaction, once its lines are read: PreCompact, then the SessionStart the
        client sends after it (source `compact`)."""
        c, self.compact = self.compact or {}, None
        turn = {"prompt_id": self.turn["prompt_id"]} if "prompt_id" in self.turn else {}
        yield (
            "PreCompact",
            {**turn, "trigger": c.get("trigger"), "custom_instructions": c.get("instructions")},
        )
        yield "SessionStart", {**turn, "source": "compact", "model": c.get("model")}

    def _payloads(
        self, obj: dict[str, Any], agent: tuple[str, str] | None = None
    ) -> Iterator[Payload]:
        """(event, payload) pairs one transcript object stands for."""
        kind = obj.get("type")
        if obj.get("isSidechain") and agent is None:
            aid = obj.get("agentId")
            agent = (aid, self._agent_type(aid)) if isinstance(aid, str) else None
            if agent is None:
                return
        extra = {"agent_id": agent[0], "agent_type": agent[1]} if agent else {}
        msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
        if kind == "user":
            cls = transcript.classify_user(obj)
            if cls == "prompt" and not agent and not obj.get("isSidechain"):
                text = transcript.message_text(msg.get("content"))
                if not text.lstrip().startswith("<command-name>"):
                    self.turn = {
                        k: obj[f]
                        for k, f in (
                            ("prompt_id", "promptId"),
                            ("permission_mode", "permissionMode"),
                        )
                        if isinstance(obj.get(f), str)
                    }
                    yield "UserPromptSubmit", {"prompt": text}
            elif cls == "tool_result":
                yield from self._results(obj, msg, extra)
            return
        if kind == "assistant":
            for block in msg.get("content") or []:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                tid, name = block.get("id"), block.get("name")
                self.calls[tid] = (name, block.get("input"), *(agent or (None, None)))
                yield (
                    "PreToolUse",
                    {
                        "tool_name": name,
                        "tool_input": block.get("input"),
                        "tool_use_id": tid,
                        **extra,
                    },
                )
            if msg.get("stop_reason") == "end_turn" and not agent:
                text = transcript.message_text(msg.get("content"))
                yield "Stop", {"last_assistant_message": text}
            return
        if kind == "system" and obj.get("subtype") == "compact_boundary" and not agent:
            meta = _meta if isinstance(_meta := obj.get("compactMetadata"), dict) else {}
            self.compact = {"trigger": meta.get("trigger"), "instructions": None}

    def _results(
        self, obj: dict[str, Any], msg: dict[str, Any], extra: dict[str, Any]
    ) -> Iterator[Payload]:
        content = msg.get("content")
        blocks = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        asked = {tid for tid, d in permissions.result_decisions(obj) if _asked(d)}
        for b in blocks:
            tid = b.get("tool_use_id")
            name, tool_input, *_ = self.calls.get(tid, (None, None, None, None))
            result = obj.get("toolUseResult") if len(blocks) == 1 else None
            if result is None:
                result = transcript.message_text(b.get("content"))
            base = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tid, **extra}
            if tid in asked:  # the person was asked: the client's PermissionRequest
                yield "PermissionRequest", {"tool_name": name, "tool_input": tool_input, **extra}
            if b.get("is_error"):
                err = transcript.message_text(b.get("content")) or str(result)
                yield "PostToolUseFailure", {**base, "error": err}
            elif name in AGENT_TOOLS and isinstance(result, dict) and not extra:
                reply = transcript.message_text(b.get("content"))
                later = result.get("isAsync") is True  # a background agent runs after it
                if later:
                    yield "PostToolUse", {**base, "tool_response": result}
                yield from self._subagent(result.get("agentId"), tool_input, reply)
                if not later:
                    yield "PostToolUse", {**base, "tool_response": result}
            else:
                yield "PostToolUse", {**base, "tool_response": result}

    def _agent_type(self, aid: str | None, tool_input: Any = None) -> str:
        meta = os.path.join(self.subagents_dir, f"agent-{aid}.meta.json")
        try:
            t = json.loads(sessionfile.read_at(meta, 0, META_MAX) or b"{}").get("agentType")
            if isinstance(t, str) and t:
                return t
        except (ValueError, RecursionError, AttributeError):
            pass
        if isinstance(tool_input, dict) and tool_input.get("subagent_type"):
            return str(tool_input["subagent_type"])
        return "general-purpose"

    def _subagent(self, aid: Any, tool_input: Any, reply: str = "") -> Iterator[Payload]:
        """A subagent's own transcript, as its SubagentStart, tool events and SubagentStop."""
        if not isinstance(aid, str) or aid in self.done_agents:
            return
        self.done_agents.add(aid)
        path = os.path.join(self.subagents_dir, f"agent-{aid}.jsonl")
        agent = (aid, self._agent_type(aid, tool_input))
        yield "SubagentStart", {"agent_id": aid, "agent_type": agent[1]}
        last_text = ""
        before, lines = handed.identity(path), self.stats.lines
        try:
            objs = list(sessionfile.iter_file(path, self.stats))
        except OSError:
            objs = []
        else:  # the builder reads it whole again at the SubagentStop below
            handed.hand_file(path, before, objs, self.stats.lines - lines)
        for obj in objs:
            if obj.get("type") == "assistant":
                m = _m if isinstance(_m := obj.get("message"), dict) else {}
                last_text = transcript.message_text(m.get("content")) or last_text
            if obj.get("type") == "user" and transcript.classify_user(obj) == "prompt":
                continue  # the task prompt is the Agent tool's input
            yield from self._payloads(obj, agent)
        yield (
            "SubagentStop",
            {
                "agent_id": aid,
                "agent_type": agent[1],
                "agent_transcript_path": path,  # its model and usage come from this file
                "last_assistant_message": last_text or reply,
            },
        )


def _asked(detail: dict[str, Any]) -> bool:
    """A decision the person made at a permission prompt (a `user_*` source)."""
    source = detail.get("source")
    return isinstance(source, str) and source.startswith("user")
