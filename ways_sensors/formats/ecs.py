"""`ecs`: each record as an Elastic Common Schema document (ECS 9.0), ready for an
Elasticsearch index or a data stream.

    @timestamp            the record's timestamp
    ecs.version           9.0.0
    event.kind            event
    event.category        tool calls by tool_kind: shell process; read, edit, write
                          file; web web; others api. Prompts, replies, permission,
                          notification, compaction, error api; sessions session;
                          subagents process
    event.type            start (a call, a session or subagent start), end (a result,
                          an end, a subagent stop), info (prompts, replies), allowed or
                          denied (a permission decision), access (a permission request),
                          error (an error section)
    event.action          the section (`tool_call`, `session_start`, ...)
    event.outcome         success or failure where the record says (a tool result, a
                          permission decision, an error), else unknown
    event.severity        the RFC 5424 severity number (severity.py); log.level its name
    event.id              `<session_id>:<sensor>/<rule>:<rule_seq>` (the same on a
                          repeated at-least-once delivery: dedupe on it;
                          `...:checkpoint:<last_rule_seq>` for a checkpoint)
    event.sequence        rule_seq; event.dataset `ways.<sensor>`; event.module `ways`
    event.hash            the chain hash, when the rule chains
    agent.*               the coding agent: agent.type (`claude-code`, `codex`, ...),
                          agent.name (the subagent's type, or `main`), agent.id (the
                          subagent's id, when there is one)
    process.command_line  a shell tool's command; process.name the tool's name
    user.*                the record's identity (fleet/identity.py): user.id and
                          user.name its id, user.email, user.full_name, user.roles its
                          groups, user.group.name its team; user.name alone, the local
                          account, for a record without one
    host.*                host.hostname and host.name this machine's name, host.id its
                          machine id
    session.id            is not an ECS field: the session id is `ways.session_id`
    message               `<section> <tool name>`: a label, never the content
    ways.*                the whole record (docs/records.md), so nothing is lost:
                          `ways.data`, `ways.session_id`, `ways.chain`, `ways.redactions`

ECS's `agent.*` names the shipper of an event; here it names the coding agent whose
session the record is from, the nearest ECS has for it.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ..index import DEFAULT
from ..state.layout import rule_label
from ._json import dumps
from .ocsf import device_of, uid, user_of
from .severity import SYSLOG, level

VERSION: Final = "9.0.0"
MEDIA_TYPE: Final = "application/json"
BATCH: Final[Literal["array", "lines"]] = "array"

TOOL_CATEGORY: Final = {
    "shell": "process",
    "read": "file",
    "edit": "file",
    "write": "file",
    "web": "web",
}


def _category_type(section: str, data: dict[str, Any]) -> tuple[str, str]:
    if section in ("tool_call", "tool_result"):
        category = TOOL_CATEGORY.get(str(data.get("tool_kind")), "api")
        return category, "start" if section == "tool_call" else "end"
    if section in ("session_start", "session_end"):
        return "session", "start" if section == "session_start" else "end"
    if section == "subagent":
        return "process", "end" if data.get("phase") == "stop" else "start"
    if section == "permission":
        if data.get("phase") == "decision":
            return "api", "denied" if data.get("decision") == "denied" else "allowed"
        return "api", "access"
    if section == "error":
        return "api", "error"
    return "api", "info"


def _outcome(section: str, data: dict[str, Any]) -> str:
    if section == "tool_result":
        return "success" if data.get("status") == "success" else "failure"
    if section == "permission" and data.get("phase") == "decision":
        return "failure" if data.get("decision") == "denied" else "success"
    if section == "error":
        return "failure"
    return "unknown"


def document(record: dict[str, Any]) -> dict[str, Any]:
    data = record.get("data")
    if not isinstance(data, dict):
        data = {}
    section = str(record.get("section", ""))
    sensor, rule = str(record.get("sensor", "")), str(record.get("rule", ""))
    category, kind = _category_type(section, data)
    severity = level(record)
    event: dict[str, Any] = {
        "kind": "event",
        "category": [category],
        "type": [kind],
        "action": section,
        "outcome": _outcome(section, data),
        "severity": SYSLOG[severity],
        "id": uid(record),
        "module": "ways",
        "dataset": f"ways.{sensor}",
    }
    if isinstance(record.get("rule_seq"), int):
        event["sequence"] = record["rule_seq"]
    chain = record.get("chain")
    if isinstance(chain, dict) and chain.get("hash"):
        event["hash"] = str(chain["hash"])
    agent: dict[str, Any] = {
        "type": str(record.get("agent") or DEFAULT),
        "name": str(record.get("agent_type") or "main"),
    }
    if record.get("agent_id"):
        agent["id"] = str(record["agent_id"])
    doc: dict[str, Any] = {
        "@timestamp": record.get("timestamp"),
        "ecs": {"version": VERSION},
        "event": event,
        "log": {"level": severity, "logger": rule_label(sensor, rule)},
        "agent": agent,
        "user": _user(record),
        "host": _host(record),
        "message": f"{section} {data['tool_name']}" if data.get("tool_name") else section,
    }
    if section in ("tool_call", "tool_result") and data.get("tool_kind") == "shell":
        process: dict[str, Any] = {"name": str(data.get("tool_name", ""))}
        command = data.get("command")
        if command is None and isinstance(data.get("input"), dict):
            command = data["input"].get("command")
        if isinstance(command, str):
            process["command_line"] = command
        doc["process"] = process
    doc["ways"] = record
    return doc


def _user(record: dict[str, Any]) -> dict[str, Any]:
    """ECS `user.*` from the record's identity; the local account without one."""
    ocsf_user = user_of(record)
    if "uid" not in ocsf_user:
        return {"name": ocsf_user["name"]}
    out: dict[str, Any] = {"id": ocsf_user["uid"], "name": ocsf_user["uid"]}
    if "email_addr" in ocsf_user:
        out["email"] = ocsf_user["email_addr"]
    if "full_name" in ocsf_user:
        out["full_name"] = ocsf_user["full_name"]
    if "groups" in ocsf_user:
        out["roles"] = [g["name"] for g in ocsf_user["groups"]]
    if "org" in ocsf_user:
        out["group"] = {"name": ocsf_user["org"]["ou_name"]}
    return out


def _host(record: dict[str, Any]) -> dict[str, Any]:
    device = device_of(record)
    out = {"hostname": device["hostname"], "name": device["hostname"]}
    if "uid" in device:
        out["id"] = device["uid"]
    return out


def encode(record: dict[str, Any], line: bytes) -> bytes:
    return dumps(document(record))
