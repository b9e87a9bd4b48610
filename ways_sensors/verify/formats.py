"""The record inside a line of any format ways writes, so `verify` checks what each
target kept (issue 35 item 4; formats/ says where each format puts the record):

    json          the record itself
    ocsf          `raw_data`: the record exactly as the json format sends it
    ecs           `ways`: the whole record
    splunk_hec    `event`: the record
    syslog        a line as rsyslog stores a message (its documented file templates,
                  RSYSLOG_FileFormat or RSYSLOG_TraditionalFileFormat: a timestamp, the
                  host, the tag, then the message): the message's MSG is the record in
                  the rule's format, found as the first JSON object in the line that is
                  a record (or one of the envelopes above)

A line that holds none of them is left as it is (the chain check names it). Bounded:
the line is already at most read.LINE_CAP; a syslog line is scanned for at most
SCAN_MAX openings of `{`, each decoded once.
"""

from __future__ import annotations

import json
from typing import Any

SCAN_MAX = 64  # `{` positions tried in a syslog line (its STRUCTURED-DATA holds none)
_decoder = json.JSONDecoder()


def unwrap(obj: Any) -> Any:
    """The record an envelope holds (ocsf, ecs, splunk_hec), else `obj` unchanged."""
    if not isinstance(obj, dict) or "section" in obj:
        return obj  # a record (json), a checkpoint record, or no dict at all
    raw = obj.get("raw_data")
    if isinstance(raw, str) and "class_uid" in obj:  # ocsf
        try:
            inner = json.loads(raw)
        except (ValueError, RecursionError):
            return obj
        return inner if isinstance(inner, dict) else obj
    for key in ("ways", "event"):  # ecs, splunk_hec
        inner = obj.get(key)
        if isinstance(inner, dict) and "section" in inner:
            return inner
    return obj


def from_text(text: str) -> Any:
    """A line's record: the line as JSON (any envelope unwrapped), or else the first
    JSON object in it that is one (a syslog message as rsyslog stored it); None."""
    try:
        return unwrap(json.loads(text))
    except ValueError:
        pass
    start = text.find("{")
    for _ in range(SCAN_MAX):
        if start < 0:
            return None
        try:
            obj, _end = _decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        inner = unwrap(obj)
        if isinstance(inner, dict) and "section" in inner:
            return inner
        start = text.find("{", start + 1)
    return None
