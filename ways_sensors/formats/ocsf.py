"""`ocsf`: each record as an event of the Open Cybersecurity Schema Framework, 1.8.0.

1.8.0 is the newest OCSF version whose schema a maintained package ships (the tests
validate every mapped event against it). Each section goes to the closest class:

    section              class (class_uid, category)          activity_id
    tool_call, shell     Process Activity (1007, System 1)     1 Launch
    tool_result, shell   Process Activity (1007, System 1)     2 Terminate
    tool_call, other     API Activity (6003, Application 6)    by tool_kind: read, search,
    tool_result, other                                         web 2 Read; write 1 Create;
                                                               edit 3 Update; else 99 Other
    user_prompt          API Activity (6003)                   1 Create
    queued_message       API Activity (6003)                   1 Create
    assistant_response   API Activity (6003)                   2 Read
    permission           API Activity (6003)                   99 Other ("Permission
                                                               request" / "... decision")
    session_start        Authentication (3002, IAM 3)          1 Logon
    session_end          Authentication (3002, IAM 3)          2 Logoff
    subagent             Application Lifecycle (6002)          3 Start / 4 Stop
    error                Application Error (6008)              1 General Error
    notification,        Base Event (0, Uncategorized 0)       99 Other (activity_name:
    compaction,                                                the section)
    way_event, checkpoint
    (signed: evidence/),
    others

Every event has `type_uid` (class_uid * 100 + activity_id), `severity_id` (severity.py:
failures, denials and errors rank above the ordinary), `time` (the record's timestamp,
epoch milliseconds), `metadata` (product `ways sensors` with its version; `uid`
`<session_id>:<sensor>/<rule>:<rule_seq>`, the same on a repeated at-least-once
delivery, `...:checkpoint:<last_rule_seq>` for a signed checkpoint; `correlation_uid`
the session id; `sequence` the rule_seq; `log_name`
`<sensor>/<rule>`; `event_code` the section; `original_time` the record's timestamp),
`actor` (`app_name` the coding agent, `app_uid` the subagent's id, `invoked_by` the
subagent's type, `session.uid` the session id, `user` the record's identity: `uid` and
`name` its user id, `email_addr`, `full_name`, `groups`, `org.name` its team; the
local account the dispatcher runs as for a record without one), `device` (this host:
`hostname`, `uid` the machine id), `status_id` where the record says how it went (a tool result, a
permission decision), the chain hash as an observable (`type_id` 99, name
`ways.chain.hash`) when the rule chains, and `unmapped.ways` with the envelope fields
no OCSF attribute takes (section, seq, rule_seq, agent_type, project, hook_event,
prompt_id). Nothing is lost: `raw_data` holds the record exactly as the `json` format
sends it, masked and chained, so `ways sensors verify` can check the chain from it.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, Final, Literal

from .. import __version__
from ..index import DEFAULT
from ..state.layout import rule_label
from ..utf8 import ERRORS
from ._json import dumps
from .severity import OCSF as SEVERITY_IDS
from .severity import level

VERSION: Final = "1.8.0"
MEDIA_TYPE: Final = "application/json"
BATCH: Final[Literal["array", "lines"]] = "array"

PRODUCT: Final = {"name": "ways sensors", "vendor_name": "ways", "version": __version__}
SEVERITY_NAMES: Final = {1: "Informational", 2: "Low", 3: "Medium", 4: "High"}

# class name -> (class_uid, class caption, category_uid, category caption)
CLASSES: Final[dict[str, tuple[int, str, int, str]]] = {
    "process": (1007, "Process Activity", 1, "System Activity"),
    "api": (6003, "API Activity", 6, "Application Activity"),
    "auth": (3002, "Authentication", 3, "Identity & Access Management"),
    "lifecycle": (6002, "Application Lifecycle", 6, "Application Activity"),
    "app_error": (6008, "Application Error", 6, "Application Activity"),
    "base": (0, "Base Event", 0, "Uncategorized"),
}
API_ACTIVITY: Final = {"read": 2, "search": 2, "web": 2, "write": 1, "edit": 3}
ACTIVITY_NAMES: Final = {
    "process": {1: "Launch", 2: "Terminate"},
    "api": {1: "Create", 2: "Read", 3: "Update"},
    "auth": {1: "Logon", 2: "Logoff"},
    "lifecycle": {3: "Start", 4: "Stop"},
    "app_error": {1: "General Error"},
}
UNMAPPED_FIELDS: Final = (
    "section",
    "seq",
    "rule_seq",
    "agent_type",
    "project",
    "hook_event",
    "prompt_id",
    "test",
)


@functools.lru_cache(maxsize=1)
def hostname() -> str:
    import socket

    return socket.gethostname() or "localhost"


@functools.lru_cache(maxsize=1)
def local_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no name for this uid (a container without /etc/passwd)
        import os

        return str(os.getuid())


def _identity(record: dict[str, Any]) -> dict[str, Any]:
    who = record.get("identity")
    return who if isinstance(who, dict) else {}


def user_of(record: dict[str, Any]) -> dict[str, Any]:
    """OCSF `actor.user` from the record's identity (fleet/identity.py); a record
    without one (written before identities) names the local account."""
    user = _identity(record).get("user")
    if not isinstance(user, dict) or not user.get("id"):
        return {"name": local_user()}
    out: dict[str, Any] = {"uid": str(user["id"]), "name": str(user.get("name") or user["id"])}
    if user.get("email"):
        out["email_addr"] = str(user["email"])
    if user.get("name"):
        out["full_name"] = str(user["name"])
    if isinstance(user.get("groups"), list):
        out["groups"] = [{"name": str(g)} for g in user["groups"]]
    if user.get("team"):
        out["org"] = {"name": str(user["team"]), "ou_name": str(user["team"])}
    return out


def device_of(record: dict[str, Any]) -> dict[str, Any]:
    """OCSF `device`: this host, its machine id as `uid` where the record has one."""
    host = _identity(record).get("host")
    host = host if isinstance(host, dict) else {}
    out: dict[str, Any] = {"type_id": 0, "type": "Unknown"}
    out["hostname"] = str(host.get("name") or hostname())
    if host.get("id"):
        out["uid"] = str(host["id"])
    return out


def epoch_ms(timestamp: Any) -> int:
    """The record's ISO timestamp as epoch milliseconds; 0 when unreadable."""
    try:
        text = str(timestamp).replace("Z", "+00:00")
        return int(datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        return 0


def uid(record: dict[str, Any]) -> str:
    """`<session_id>:<sensor>/<rule>:<rule_seq>`, the same on a repeated delivery; a
    signed checkpoint (no rule_seq: evidence/sealer.py) is `...:checkpoint:<last_rule_seq>`."""
    sensor, rule = record.get("sensor", ""), record.get("rule", "")
    n = record.get("rule_seq")
    if n is None and record.get("section") == "checkpoint":
        n = f"checkpoint:{record.get('last_rule_seq')}"
    return f"{record.get('session_id', '')}:{rule_label(sensor, rule)}:{n}"


def _classify(record: dict[str, Any], data: dict[str, Any]) -> tuple[str, int, str]:
    """(class key, activity_id, activity_name) of a record."""
    section = str(record.get("section", ""))
    if section in ("tool_call", "tool_result"):
        result = section == "tool_result"
        if data.get("tool_kind") == "shell":
            return ("process", 2 if result else 1, "")
        kind = str(data.get("tool_kind") or "other")
        activity = API_ACTIVITY.get(kind, 99)
        return ("api", activity, kind.capitalize() if activity == 99 else "")
    if section in ("user_prompt", "queued_message"):
        return ("api", 1, "")
    if section == "assistant_response":
        return ("api", 2, "")
    if section == "permission":
        phase = "decision" if data.get("phase") == "decision" else "request"
        return ("api", 99, f"Permission {phase}")
    if section in ("session_start", "session_end"):
        return ("auth", 1 if section == "session_start" else 2, "")
    if section == "subagent":
        return ("lifecycle", 4 if data.get("phase") == "stop" else 3, "")
    if section == "error":
        return ("app_error", 1, "")
    return ("base", 99, section or "Other")


def _status(section: str, data: dict[str, Any]) -> tuple[int, str] | None:
    if section == "tool_result":
        return (1, "Success") if data.get("status") == "success" else (2, "Failure")
    if section == "permission" and data.get("phase") == "decision":
        return (2, "Failure") if data.get("decision") == "denied" else (1, "Success")
    return None


def event(record: dict[str, Any], line: bytes) -> dict[str, Any]:
    """The OCSF event of one record (the table in the module docstring)."""
    data = record.get("data")
    if not isinstance(data, dict):
        data = {}
    section = str(record.get("section", ""))
    key, activity_id, activity_name = _classify(record, data)
    class_uid, class_name, category_uid, category_name = CLASSES[key]
    activity_name = activity_name or ACTIVITY_NAMES[key][activity_id]
    severity_id = SEVERITY_IDS[level(record)]
    session_id = str(record.get("session_id", ""))
    sensor, rule = str(record.get("sensor", "")), str(record.get("rule", ""))
    metadata: dict[str, Any] = {
        "version": VERSION,
        "product": PRODUCT,
        "uid": uid(record),
        "correlation_uid": session_id,
        "log_name": rule_label(sensor, rule),
        "event_code": section,
        "original_time": str(record.get("timestamp", "")),
        "profiles": ["host"],
    }
    if isinstance(record.get("rule_seq"), int):
        metadata["sequence"] = record["rule_seq"]
    actor: dict[str, Any] = {
        "app_name": str(record.get("agent") or DEFAULT),
        "session": {"uid": session_id},
        "user": user_of(record),
    }
    if record.get("agent_id"):
        actor["app_uid"] = str(record["agent_id"])
        actor["invoked_by"] = str(record.get("agent_type", ""))
    ev: dict[str, Any] = {
        "class_uid": class_uid,
        "class_name": class_name,
        "category_uid": category_uid,
        "category_name": category_name,
        "activity_id": activity_id,
        "activity_name": activity_name,
        "type_uid": class_uid * 100 + activity_id,
        "type_name": f"{class_name}: {activity_name}",
        "severity_id": severity_id,
        "severity": SEVERITY_NAMES[severity_id],
        "time": epoch_ms(record.get("timestamp")),
        "metadata": metadata,
        "actor": actor,
        "message": _message(section, data),
    }
    status = _status(section, data)
    if status is not None:
        ev["status_id"], ev["status"] = status
    _class_fields(key, ev, record, data)
    chain = record.get("chain")
    if isinstance(chain, dict) and chain.get("hash"):
        ev["observables"] = [
            {"name": "ways.chain.hash", "type_id": 99, "type": "Other", "value": str(chain["hash"])}
        ]
    ev.setdefault("device", device_of(record))
    ev["unmapped"] = {"ways": {k: record[k] for k in UNMAPPED_FIELDS if k in record}}
    install = _identity(record).get("install_id")
    if isinstance(install, str):
        ev["unmapped"]["ways"]["install_id"] = install
    ev["raw_data"] = line.decode("utf-8", ERRORS)
    return ev


def _message(section: str, data: dict[str, Any]) -> str:
    tool = data.get("tool_name")
    return f"{section} {tool}" if tool else section


def _class_fields(
    key: str, ev: dict[str, Any], record: dict[str, Any], data: dict[str, Any]
) -> None:
    """The attributes a class requires or recommends beyond the base event's."""
    session_id = str(record.get("session_id", ""))
    section = str(record.get("section", ""))
    if key in ("process", "api"):
        ev["device"] = device_of(record)
    if key == "process":
        process: dict[str, Any] = {
            "uid": str(data.get("tool_use_id") or f"{session_id}:{record.get('seq')}"),
            "name": str(data.get("tool_name", "")),
        }
        command = data.get("command")
        if command is None and isinstance(data.get("input"), dict):
            command = data["input"].get("command")
        if isinstance(command, str):
            process["cmd_line"] = command
        ev["process"] = process
    elif key == "api":
        operation = str(data.get("tool_name") or section)
        api: dict[str, Any] = {"operation": operation}
        if data.get("mcp_server"):
            api["service"] = {"name": str(data["mcp_server"])}
        if data.get("tool_use_id"):
            api["request"] = {"uid": str(data["tool_use_id"])}
        ev["api"] = api
        ev["src_endpoint"] = {"hostname": hostname()}
        if section == "assistant_response" and isinstance(data.get("model"), str):
            ev["ai_model"] = {"name": data["model"], "ai_provider": str(record.get("agent"))}
            ev["metadata"]["profiles"] = ["host", "ai_operation"]
    elif key == "auth":
        ev["user"] = {"name": local_user()}
        ev["session"] = {"uid": session_id}
        ev["is_remote"] = False
        ev["service"] = {"name": str(record.get("agent") or DEFAULT)}
        reason = data.get("reason") or data.get("source")
        if reason:
            ev["status_detail"] = str(reason)
    elif key == "lifecycle":
        ev["app"] = {
            "name": str(data.get("agent_type") or record.get("agent_type") or "subagent"),
            "uid": str(data.get("agent_id") or record.get("agent_id") or ""),
            "vendor_name": str(record.get("agent") or DEFAULT),
        }
    elif key == "app_error" and data.get("error"):
        ev["status_detail"] = str(data["error"])


def encode(record: dict[str, Any], line: bytes) -> bytes:
    return dumps(event(record, line))
