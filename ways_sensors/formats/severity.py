"""How serious a record is: one decision the syslog target, OCSF and ECS share.

Most records are ordinary (`info`). Three kinds rank above them, so a SIEM's severity
filter finds them without reading the record:

    error     an `error` section (a turn that ended on an API failure)
    warning   a permission decision that denied a tool call; a session end the
              dispatcher had to make up (`reason: lost`: the client vanished)
    notice    a failed tool call (`tool_result` with `status: failure`)
    info      everything else

Each level maps to RFC 5424's severity numbers (syslog.py), to OCSF's severity_id
(ocsf.py) and to OpenTelemetry's SeverityNumber and short name (the otlp target's log
records; the log data model's own mapping of syslog's levels); ECS carries the syslog
number as `event.severity` and the name as `log.level`. Every target and format takes
its severity from `level` here, and nowhere else.
"""

from __future__ import annotations

from typing import Any, Final, Literal

Level = Literal["error", "warning", "notice", "info"]

# RFC 5424 section 6.2.1, table 2
SYSLOG: Final[dict[str, int]] = {"error": 3, "warning": 4, "notice": 5, "info": 6}
# OCSF severity_id: 1 Informational, 2 Low, 3 Medium, 4 High
OCSF: Final[dict[str, int]] = {"error": 4, "warning": 3, "notice": 2, "info": 1}
# OpenTelemetry log data model: SeverityNumber and short name, as it maps syslog's
# Error, Warning, Notice and Informational (appendix B)
OTEL: Final[dict[str, tuple[int, str]]] = {
    "error": (17, "ERROR"),
    "warning": (13, "WARN"),
    "notice": (10, "INFO2"),
    "info": (9, "INFO"),
}


def level(record: dict[str, Any]) -> Level:
    section = record.get("section")
    data = record.get("data")
    if not isinstance(data, dict):
        data = {}
    if section == "error":
        return "error"
    if section == "permission" and data.get("decision") == "denied":
        return "warning"
    if section == "session_end" and data.get("reason") == "lost":
        return "warning"
    if section == "tool_result" and data.get("status") == "failure":
        return "notice"
    return "info"
