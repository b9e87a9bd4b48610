"""One finished record of every section and variant a consumer can receive, shaped as
docs/records.md describes them (the envelope, the section's data, the rule fields, the
chain), sealed with the real chain; and the OCSF schema the tests validate against."""

from __future__ import annotations

import functools
from typing import Any

from ways_sensors.pipeline.chain import seal
from ways_sensors.pipeline.stages import dumps

SID = "379ca3ad-bf11-4ee5-99cf-3d61ea8d7fe2"
USER = {"id": "dana", "email": "dana@corp.example", "name": "Dana Dev", "team": "platform"}
IDENTITY = {  # fleet/identity.py: on every record
    "user": {**USER, "groups": ["eng", "sre"]},
    "install_id": "5f0c6a8e1d2b4c7f9a3e8b1d6c4f2a90",
    "host": {"id": "4c4c4544004d3510", "name": "build-7"},
}
SHELL_CALL = {"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_kind": "shell",
              "command": "git status", "input": {"command": "git status"}}  # fmt: skip
DATA: list[tuple[str, dict[str, Any]]] = [
    ("session_start", {"source": "startup", "model": "claude-opus-4"}),
    ("user_prompt", {"prompt": "rename the frobnicator"}),
    ("tool_call", SHELL_CALL),
    ("tool_result", {**SHELL_CALL, "status": "success", "output": {"stdout": "clean"}}),
    ("tool_result", {**SHELL_CALL, "status": "failure", "error": "Exit code 3"}),
    ("tool_call", {"tool_name": "Read", "tool_use_id": "toolu_02", "tool_kind": "read",
                   "input": {"file_path": "/home/dev/project/a.py"}}),
    ("tool_call", {"tool_name": "Edit", "tool_use_id": "toolu_03", "tool_kind": "edit",
                   "input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}}),
    ("tool_call", {"tool_name": "Write", "tool_use_id": "toolu_04", "tool_kind": "write",
                   "input": {"file_path": "b.py", "content": "print()"}}),
    ("tool_call", {"tool_name": "mcp__github__search", "tool_use_id": "toolu_05",
                   "tool_kind": "mcp", "mcp_server": "github", "mcp_tool": "search",
                   "input": {"q": "x"}}),
    ("tool_result", {"tool_name": "WebFetch", "tool_use_id": "toolu_06", "tool_kind": "web",
                     "status": "success", "output": "<html>"}),
    ("permission", {"phase": "request", "tool_name": "Bash", "tool_use_id": "toolu_07",
                    "input": {"command": "rm -rf build"}, "mode": "default"}),
    ("permission", {"phase": "decision", "tool_name": "Bash", "tool_use_id": "toolu_07",
                    "decision": "denied", "source": "user"}),
    ("permission", {"phase": "decision", "tool_name": "Bash", "tool_use_id": "toolu_08",
                    "decision": "allowed_by_rule", "source": "settings"}),
    ("queued_message", {"text": "also check the tests", "via": "absorbed"}),
    ("assistant_response", {"text": "Done.", "model": "claude-opus-4",
                            "usage": {"input_tokens": 10, "output_tokens": 5}}),
    ("subagent", {"phase": "start", "agent_id": "a1b2", "agent_type": "Explore"}),
    ("subagent", {"phase": "stop", "agent_id": "a1b2", "agent_type": "Explore"}),
    ("notification", {"type": "permission_prompt", "message": "needs you", "title": "x"}),
    ("compaction", {"phase": "before", "trigger": "manual", "instructions": "keep it"}),
    ("error", {"error": "rate_limit", "details": "429", "text": "API Error"}),
    ("way_event", {"kind": "fired", "way": "style"}),
    ("session_end", {"reason": "lost", "synthesized": True, "last_seen": "2026-12-01"}),
    ("session_end", {"reason": "other"}),
]  # fmt: skip


def records(chain: bool = True) -> list[dict[str, Any]]:
    """The samples as one rule's records of one session, in order, chained."""
    out, prev = [], "0" * 64
    for n, (section, data) in enumerate(DATA, 1):
        sub = section == "subagent" or n == 6  # a subagent's Read
        rec: dict[str, Any] = {
            "schema": "ways.sensor.record/1",
            "section": section,
            "seq": n,
            "session_id": SID,
            "agent": "claude-code",
            "agent_id": "a1b2" if sub else None,
            "agent_type": "Explore" if sub else "main",
            "timestamp": f"2026-11-29T23:47:{n:02d}.728Z",
            "project": "/home/dev/project",
            "hook_event": "PreToolUse",
            "identity": IDENTITY,
            "data": data,
            "sensor": "audit",
            "rule": "all",
            "rule_seq": n,
        }
        if chain:
            prev = seal(rec, prev)
        out.append(rec)
    return out


def lines(recs: list[dict[str, Any]]) -> list[bytes]:
    return [dumps(r) for r in recs]


@functools.cache
def ocsf_validator(class_uid: int, profiles: tuple[str, ...]) -> Any:
    """A JSON Schema validator for one OCSF 1.8.0 class with the profiles the event
    declares, from the schema the ocsf-json-schema package ships (the official export)."""
    import jsonschema

    schema = _schema()
    name = schema.lookup_class_name_from_uid(class_uid)
    return jsonschema.Draft202012Validator(schema.get_class_schema(name, list(profiles)))


@functools.lru_cache(maxsize=1)
def _schema() -> Any:
    from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema

    return OcsfJsonSchemaEmbedded(get_ocsf_schema(version="1.8.0"))


def ocsf_errors(event: dict[str, Any]) -> list[str]:
    v = ocsf_validator(event["class_uid"], tuple(event["metadata"].get("profiles", ())))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(event)]
