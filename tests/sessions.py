"""A scripted Claude Code session carrying known strings in every free-text place, played
through the real hook (each payload as Claude Code sends it, the transcript written as
Claude Code writes it), for tests that check what reaches a consumer byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

SID = "7d2f9c1a-4b3e-4f5a-8c6d-1e2f3a4b5c6d"
PROMPT_ID = "a9e1c2d3-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
PROMPT_ID2 = "b0f2d3e4-5a6b-4c7d-9e8f-0a1b2c3d4e5f"  # each turn its own, as the client does
AGENT_ID = "b7c8d9e0f1a2b3c4d"

# one per kind of free text; none looks like a secret, so masking leaves them whole
KNOWN = {
    "prompt": "Please rename the frobnicator in quokka_module",
    "prompt2": "Now explain the wombat ledger again",
    "input": "grep -rn pangolin_marker src/",
    "output": "src/a.py:3: pangolin_output_line héllo",
    "error": "Exit code 2: narwhal_failure_text",
    "reply": "I renamed the frobnicator; axolotl_reply_text follows",
    "subagent_reply": "Subagent found capybara_subagent_text",
    "subagent_input": "okapi_subagent_search",
    "queued": "also check the tapir_queued_text",
    "interrupted": "Partial answer about the ibex_interrupted_text",
    "instructions": "keep the manatee_compaction_notes",
}


# what a whole session yields, per section (SessionEnd included)
EXPECTED = {
    "session_start": 1,
    "user_prompt": 2,
    "tool_call": 2,
    "tool_result": 2,
    "subagent": 2,
    "assistant_response": 3,
    "queued_message": 1,
    "compaction": 1,
    "session_end": 1,
}
TOTAL = sum(EXPECTED.values())


class ScriptedSession:
    """Plays the session's hook events through `install.hook`, writing the transcript."""

    def __init__(self, install, folder: Path, sid: str = SID):
        self.install = install
        self.sid = sid
        self.transcript = folder / f"{sid}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.transcript.write_text("")
        self.n = 0

    def common(self, event: str) -> dict:
        return {
            "session_id": self.sid,
            "transcript_path": str(self.transcript),
            "cwd": str(self.install.project),
            "hook_event_name": event,
        }

    def hook(self, event: str, **fields) -> None:
        r = self.install.hook({**self.common(event), **fields})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")

    def line(self, obj: dict) -> None:
        self.n += 1
        obj = {
            "sessionId": self.sid,
            "uuid": f"00000000-0000-4000-8000-{self.n:012d}",
            "timestamp": f"2026-10-06T09:14:{self.n:02d}.000Z",
            "isSidechain": False,
            **obj,
        }
        with self.transcript.open("a") as f:
            f.write(json.dumps(obj) + "\n")

    def user(self, text: str) -> None:
        self.line({"type": "user", "message": {"role": "user", "content": text}})

    def assistant(self, text: str, mid: str, stop_reason: str | None = None) -> None:
        """A reply's line; the one a Stop answers ends the reply (`stop_reason`), as the
        client writes it before its Stop hook. Left open, the dispatcher waits up to
        builder.USAGE_WAIT for the reply's last API call while the file is fresh; with it
        the record is the same (no `usage` line: `usage_missing: pending`), only sooner."""
        message: dict = {"id": mid, "content": [{"type": "text", "text": text}]}
        if stop_reason is not None:
            message["stop_reason"] = stop_reason
        self.line({"type": "assistant", "message": message})

    def play(self, end: bool = True) -> None:
        k = KNOWN
        self.hook("SessionStart", source="startup", model="claude-test-1")
        self.user(k["prompt"])
        self.hook("UserPromptSubmit", prompt=k["prompt"], prompt_id=PROMPT_ID)
        tool = {"tool_name": "Bash", "tool_use_id": "toolu_01Known", "prompt_id": PROMPT_ID}
        self.hook("PreToolUse", tool_input={"command": k["input"]}, **tool)
        self.hook("PostToolUse", tool_response={"stdout": k["output"]}, **tool)
        self.hook("PostToolUseFailure", error=k["error"], **tool)
        self.hook("SubagentStart", agent_id=AGENT_ID, agent_type="Explore")
        self.hook(
            "PreToolUse",
            agent_id=AGENT_ID,
            agent_type="Explore",
            tool_name="Grep",
            tool_use_id="toolu_01Sub",
            tool_input={"pattern": k["subagent_input"]},
        )
        self.hook(
            "SubagentStop",
            agent_id=AGENT_ID,
            agent_type="Explore",
            last_assistant_message=k["subagent_reply"],
        )
        op = {"type": "queue-operation"}
        self.line({**op, "operation": "enqueue", "content": k["queued"]})
        self.line({**op, "operation": "remove", "content": k["queued"]})
        self.assistant(k["reply"], "msg_1", stop_reason="end_turn")
        self.hook("Stop", last_assistant_message=k["reply"], stop_hook_active=False)
        self.hook("PreCompact", trigger="manual", custom_instructions=k["instructions"])
        self.user(k["prompt2"])
        self.hook("UserPromptSubmit", prompt=k["prompt2"], prompt_id=PROMPT_ID2)
        self.assistant(k["interrupted"], "msg_2")  # never reaches a Stop
        if end:
            self.hook("SessionEnd", reason="other")


def span_records(n_tools: int = 3) -> list[dict]:
    """A small session's records as a rule receives them (traces tests): a prompt,
    `n_tools` calls, then their results, a reply and the end."""
    out: list[dict] = []

    def add(section: str, data: dict, second: int) -> None:
        out.append(
            {
                "section": section,
                "seq": len(out) + 1,
                "rule_seq": len(out) + 1,
                "session_id": "s-resend",
                "agent": "claude-code",
                "agent_id": None,
                "timestamp": f"2026-10-06T09:14:{second:02d}.000Z",
                "data": data,
                "chain": {"prev": "0" * 64, "hash": f"{len(out) + 1:064x}"},
            }
        )

    add("session_start", {"source": "startup"}, 0)
    add("user_prompt", {"prompt": "go"}, 1)
    for i in range(n_tools):
        add("tool_call", {"tool_name": "Bash", "tool_use_id": f"t{i}", "input": {"c": i}}, 2 + i)
    for i in range(n_tools):
        add("tool_result", {"tool_name": "Bash", "tool_use_id": f"t{i}", "status": "success",
                            "output": i}, 10 + i)  # fmt: skip
    add("assistant_response", {"text": "done", "model": "m"}, 20)
    add("session_end", {"reason": "other"}, 21)
    return out
