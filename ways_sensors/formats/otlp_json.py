"""`otlp_json`: a batch as one OTLP request in OTLP's JSON mapping (the otlp target's
`encoding: json`, the default). The request (ExportLogsServiceRequest or
ExportTraceServiceRequest, lowerCamelCase keys, 64-bit integers as decimal strings) is
drawn by the target (targets/otlp.py; its log records by otlp_logs.py, its spans by
traces/export.py); this module makes its bytes and reads the answer's partial success.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

MEDIA_TYPE: Final = "application/json"


def encode(request: dict[str, Any]) -> bytes:
    """UTF-8 JSON. msgspec writes the same bytes as json.dumps, faster, and a batch is
    many records' worth of text; json writes whatever msgspec refuses."""
    try:
        return msgspec.json.encode(request)
    except Exception:  # whatever msgspec refuses, json writes
        return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def partial(body: bytes) -> tuple[int, str]:
    """(partialSuccess.rejectedLogRecords, or rejectedSpans for traces, and its
    errorMessage cut to 200 characters) from a 2xx body; (0, "") for an empty, cut or
    non-JSON body. The count may be a string."""
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return 0, ""
    found = obj.get("partialSuccess") if isinstance(obj, dict) else None
    if not isinstance(found, dict):
        return 0, ""
    raw: Any = found.get("rejectedLogRecords", found.get("rejectedSpans", 0))
    try:
        count = int(raw) if not isinstance(raw, bool) else 0
    except (TypeError, ValueError):
        count = 0
    message = found.get("errorMessage")
    return max(0, count), (message if isinstance(message, str) else "")[:200]
