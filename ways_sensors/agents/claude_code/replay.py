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
from ..kit import sessionfile
from ..kit.replaying import Recording, ts_ns
from . import transcript
from .builder import Builder

AGENT_TOOLS = ("Agent", "Task")
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

    def drafts(self) -> Iterator[Draft]:
        with Recording(Builder(), self.session_id, self.path, "transcript.jsonl") as rec:
            ts, started = 0, False
            for _, objs in sessionfile.iter_lines(self.path, self.stats):
                for obj in objs:
                    ts = ts_ns(obj.get("timestamp"), ts)
                    if not started and isinstance(obj.get("timestamp"), str):
                        started = True  # at the first line that says when
                        yield from rec.build("SessionStart", {"source": "startup"}, ts, 0)
                    rec.copy(json.dumps(obj).encode() + b"\n")
                    for event, payload in self._payloads(obj):
                        yield from rec.build(event, payload, ts)
            yield from rec.end(ts)  # replies never answered by a Stop

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
            yield "PreCompact", {"trigger": meta.get("trigger"), "custom_instructions": None}
            yield "SessionStart", {"source": "compact"}

    def _results(
        self, obj: dict[str, Any], msg: dict[str, Any], extra: dict[str, Any]
    ) -> Iterator[Payload]:
        content = msg.get("content")
        blocks = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        for b in blocks:
            tid = b.get("tool_use_id")
            name, tool_input, *_ = self.calls.get(tid, (None, None, None, None))
            result = obj.get("toolUseResult") if len(blocks) == 1 else None
            if result is None:
                result = transcript.message_text(b.get("content"))
            base = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tid, **extra}
            if b.get("is_error"):
                err = transcript.message_text(b.get("content")) or str(result)
                yield "PostToolUseFailure", {**base, "error": err}
            else:
                if name in AGENT_TOOLS and isinstance(result, dict) and not extra:
                    reply = transcript.message_text(b.get("content"))
                    yield from self._subagent(result.get("agentId"), tool_input, reply)
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
        try:
            objs = list(sessionfile.iter_file(path, self.stats))
        except OSError:
            objs = []
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
