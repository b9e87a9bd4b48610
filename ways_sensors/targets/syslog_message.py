"""One record as one RFC 5424 syslog message: what the `syslog` target (syslog.py) sends.

    <PRI>1 TIMESTAMP HOSTNAME ways PROCID MSGID [ways@32473 ...] MSG

PRI is the rule's `facility` (default `local0`) times 8 plus the severity: the rule's
`severity`, or with `auto` (the default) the record's own (formats/severity.py: `err`
for an error section, `warning` for a denied permission or a session end made up for a
vanished client, `notice` for a failed tool call, `info` otherwise). TIMESTAMP is the
record's timestamp; HOSTNAME this machine's name; APP-NAME `ways`; PROCID the
delivering process; MSGID the section (`tool_call`, `session_start`, ...). One
STRUCTURED-DATA element carries the record's identity:

    [ways@32473 session_id="..." agent="claude-code" sensor="audit" rule="all"
                rule_seq="3" seq="3" chain_hash="<64 hex>" user="jdoe"
                user_email="..." install_id="<32 hex>" host_id="<machine id>"]

(`chain_hash` when the rule chains; `seq` absent on blocking rules' records; `user`,
`user_email`, `install_id` and `host_id` from the record's identity, each where known,
fleet/identity.py). The SD-ID
is `ways@32473`: 32473 is the Private Enterprise Number IANA reserves for examples (RFC
5612), since ways has none of its own; receivers match on the whole SD-ID, which will
not change. Parameter values escape `"`, `\\` and `]` with a backslash (RFC 5424 6.3.3).
MSG is the record in the rule's `format` (`json`, the default; `ocsf`; `ecs`), one line
of UTF-8 JSON without a BOM (MSG-ANY: a BOM breaks most JSON parsers downstream).
"""

from __future__ import annotations

import os
import re
from typing import Any, Final, Literal, get_args

from ..index import DEFAULT
from ..utf8 import ERRORS
from .base import Item

Facility = Literal[
    "kern",
    "user",
    "mail",
    "daemon",
    "auth",
    "syslog",
    "lpr",
    "news",
    "uucp",
    "cron",
    "authpriv",
    "ftp",
    "ntp",
    "audit",
    "alert",
    "clock",
    "local0",
    "local1",
    "local2",
    "local3",
    "local4",
    "local5",
    "local6",
    "local7",
]
Severity = Literal["auto", "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]
FACILITIES: Final = {name: code for code, name in enumerate(get_args(Facility))}  # RFC 5424
SEVERITIES: Final = {name: code for code, name in enumerate(get_args(Severity)[1:])}
SD_ID: Final = "ways@32473"
APP_NAME: Final = "ways"
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})\Z")
_PRINTUSASCII = re.compile(r"[^!-~]")


def _field(value: str, limit: int) -> str:
    """A header field: printable US-ASCII only (RFC 5424 6.2), at most `limit` long."""
    value = _PRINTUSASCII.sub("_", value)[:limit]
    return value or "-"


def _sd_value(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def structured_data(record: dict[str, Any]) -> str:
    """The record's identity as one SD-ELEMENT (the module docstring lists it)."""
    params = [
        ("session_id", record.get("session_id")),
        ("agent", record.get("agent") or DEFAULT),
        ("sensor", record.get("sensor")),
        ("rule", record.get("rule")),
        ("rule_seq", record.get("rule_seq")),
        ("seq", record.get("seq")),
    ]
    chain = record.get("chain")
    if isinstance(chain, dict) and chain.get("hash"):
        params.append(("chain_hash", chain["hash"]))
    who = record.get("identity")
    if isinstance(who, dict):  # fleet/identity.py
        user, host = who.get("user"), who.get("host")
        user = user if isinstance(user, dict) else {}
        host = host if isinstance(host, dict) else {}
        params += [
            ("user", user.get("id")),
            ("user_email", user.get("email")),
            ("install_id", who.get("install_id")),
            ("host_id", host.get("id")),
        ]
    inner = " ".join(f'{k}="{_sd_value(v)}"' for k, v in params if v is not None)
    return f"[{SD_ID} {inner}]"


def record_severity(record: dict[str, Any]) -> int:
    """The record's own level as RFC 5424's number (formats/severity.py)."""
    from ..formats.severity import SYSLOG, level

    return SYSLOG[level(record)]


def _hostname() -> str:
    from ..formats.ocsf import hostname

    return _field(hostname(), 255)


def rfc5424(pri: int, fmt: str, item: Item) -> bytes:
    """One record as one RFC 5424 message (no framing), MSG in format `fmt`."""
    record = item.record
    stamp = str(record.get("timestamp") or "")
    if not _TIMESTAMP.match(stamp):
        stamp = "-"
    msgid = _field(str(record.get("section") or ""), 32)
    head = (
        f"<{pri}>1 {stamp} {_hostname()} {APP_NAME} {os.getpid()} {msgid} "
        f"{structured_data(record)} "
    )
    body = item.line
    if fmt != "json":
        from .. import formats

        body = formats.encode(fmt, record, item.line)
    return head.encode("utf-8", ERRORS) + body


def frame(msg: bytes) -> bytes:
    """RFC 6587 octet counting."""
    return b"%d " % len(msg) + msg
