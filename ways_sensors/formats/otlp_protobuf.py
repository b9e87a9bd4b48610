"""`otlp_protobuf`: OTLP's protobuf encoding, by hand (the otlp target's `encoding:
protobuf`, media type application/x-protobuf).

The target builds every request as OTLP's JSON mapping (targets/otlp.py, traces/export.py);
`encode` writes that same mapping in the protobuf wire format of
opentelemetry-proto's ExportLogsServiceRequest / ExportTraceServiceRequest, field by
field from the table below (the field numbers of opentelemetry/proto/*/v1/*.proto). So
the dispatcher needs no protobuf runtime and both encodings say the same thing; the
tests decode every body with the official definitions and compare it with the JSON.

What the JSON mapping writes differently, and how it is read here: trace and span ids
are lowercase hex (bytes on the wire); 64-bit integers are decimal strings (varint or
fixed64 on the wire); enums are numbers. A key the table does not know raises
ValueError (a request this module would silently thin is a bug, not a delivery).

The answer to a protobuf request is an Export*ServiceResponse in protobuf: `partial`
reads its partial_success (rejected count, error message) without trusting it: a body
that does not parse reads as (0, "").
"""

from __future__ import annotations

import struct
from typing import Any, Final

MEDIA_TYPE: Final = "application/x-protobuf"

# message -> JSON key -> (field number, wire kind, sub-message)
# kinds: msg (length-delimited message), str, hex (bytes from hex), var (varint: enums,
# uint32, int64 and bool), f64 (fixed64), f32 (fixed32), dbl (double)
_KV = {"key": (1, "str", ""), "value": (2, "msg", "AnyValue")}
_RESOURCE = {"attributes": (1, "msg", "KeyValue"), "droppedAttributesCount": (2, "var", "")}
_SCOPE = {
    "name": (1, "str", ""),
    "version": (2, "str", ""),
    "attributes": (3, "msg", "KeyValue"),
    "droppedAttributesCount": (4, "var", ""),
}
SCHEMA: dict[str, dict[str, tuple[int, str, str]]] = {
    "ExportLogsServiceRequest": {"resourceLogs": (1, "msg", "ResourceLogs")},
    "ExportTraceServiceRequest": {"resourceSpans": (1, "msg", "ResourceSpans")},
    "ResourceLogs": {
        "resource": (1, "msg", "Resource"),
        "scopeLogs": (2, "msg", "ScopeLogs"),
        "schemaUrl": (3, "str", ""),
    },
    "ResourceSpans": {
        "resource": (1, "msg", "Resource"),
        "scopeSpans": (2, "msg", "ScopeSpans"),
        "schemaUrl": (3, "str", ""),
    },
    "Resource": _RESOURCE,
    "InstrumentationScope": _SCOPE,
    "KeyValue": _KV,
    "KeyValueList": {"values": (1, "msg", "KeyValue")},
    "ArrayValue": {"values": (1, "msg", "AnyValue")},
    "AnyValue": {
        "stringValue": (1, "str", ""),
        "boolValue": (2, "var", ""),
        "intValue": (3, "var", ""),
        "doubleValue": (4, "dbl", ""),
        "arrayValue": (5, "msg", "ArrayValue"),
        "kvlistValue": (6, "msg", "KeyValueList"),
    },
    "ScopeLogs": {
        "scope": (1, "msg", "InstrumentationScope"),
        "logRecords": (2, "msg", "LogRecord"),
        "schemaUrl": (3, "str", ""),
    },
    "ScopeSpans": {
        "scope": (1, "msg", "InstrumentationScope"),
        "spans": (2, "msg", "Span"),
        "schemaUrl": (3, "str", ""),
    },
    "LogRecord": {
        "timeUnixNano": (1, "f64", ""),
        "severityNumber": (2, "var", ""),
        "severityText": (3, "str", ""),
        "body": (5, "msg", "AnyValue"),
        "attributes": (6, "msg", "KeyValue"),
        "droppedAttributesCount": (7, "var", ""),
        "flags": (8, "f32", ""),
        "traceId": (9, "hex", ""),
        "spanId": (10, "hex", ""),
        "observedTimeUnixNano": (11, "f64", ""),
        "eventName": (12, "str", ""),
    },
    "Span": {
        "traceId": (1, "hex", ""),
        "spanId": (2, "hex", ""),
        "traceState": (3, "str", ""),
        "parentSpanId": (4, "hex", ""),
        "name": (5, "str", ""),
        "kind": (6, "var", ""),
        "startTimeUnixNano": (7, "f64", ""),
        "endTimeUnixNano": (8, "f64", ""),
        "attributes": (9, "msg", "KeyValue"),
        "droppedAttributesCount": (10, "var", ""),
        "events": (11, "msg", "Event"),
        "droppedEventsCount": (12, "var", ""),
        "links": (13, "msg", "Link"),
        "droppedLinksCount": (14, "var", ""),
        "status": (15, "msg", "Status"),
        "flags": (16, "f32", ""),
    },
    "Event": {
        "timeUnixNano": (1, "f64", ""),
        "name": (2, "str", ""),
        "attributes": (3, "msg", "KeyValue"),
        "droppedAttributesCount": (4, "var", ""),
    },
    "Link": {
        "traceId": (1, "hex", ""),
        "spanId": (2, "hex", ""),
        "traceState": (3, "str", ""),
        "attributes": (4, "msg", "KeyValue"),
        "droppedAttributesCount": (5, "var", ""),
        "flags": (6, "f32", ""),
    },
    "Status": {"message": (2, "str", ""), "code": (3, "var", "")},
}
_WIRE = {"msg": 2, "str": 2, "hex": 2, "var": 0, "f64": 1, "f32": 5, "dbl": 1}
_MASK64 = (1 << 64) - 1
_Q, _I, _D = struct.Struct("<Q").pack, struct.Struct("<I").pack, struct.Struct("<d").pack


_ONE = [bytes((n,)) for n in range(0x80)]  # the one-byte varints, made once


def _varint(n: int) -> bytes:
    n &= _MASK64  # a negative int64 is its two's complement, ten bytes
    if n < 0x80:
        return _ONE[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# message -> JSON key -> (the field's tag, already encoded; its kind; its sub-message)
_TABLE: dict[str, dict[str, tuple[bytes, str, str]]] = {
    name: {key: (_varint(num << 3 | _WIRE[kind]), kind, sub) for key, (num, kind, sub) in f.items()}
    for name, f in SCHEMA.items()
}


_KEYS: dict[str, bytes] = {}  # an attribute key's field (tag, length, UTF-8), made once
MAX_KEYS = 4096


def _key(key: Any) -> bytes:
    got = _KEYS.get(key) if type(key) is str else None
    if got is None:
        raw = str(key).encode("utf-8", "replace")
        got = b"\x0a" + _varint(len(raw)) + raw
        if type(key) is str and len(_KEYS) < MAX_KEYS:
            _KEYS[key] = got
    return got


def _keyvalue(kv: dict[str, Any]) -> bytes:
    """One attribute (most of a request): a KeyValue of a scalar written directly, the
    bytes message() would write; anything else through message(). Attribute keys repeat
    from span to span: each key's bytes are made once (_key)."""
    value = kv.get("value")
    if len(kv) != 2 or not isinstance(value, dict) or len(value) != 1 or "key" not in kv:
        return message("KeyValue", kv)
    ((kind, v),) = value.items()
    if kind == "stringValue":
        text = (v if type(v) is str else str(v)).encode("utf-8", "replace")
        any_ = b"\x0a" + _varint(len(text)) + text
    elif kind == "intValue":
        any_ = b"\x18" + _varint(int(v))
    elif kind == "boolValue":
        any_ = b"\x10\x01" if v else b"\x10\x00"
    elif kind == "doubleValue":
        any_ = b"\x21" + _D(float(v))
    else:
        any_ = message("AnyValue", value)
    return _key(kv["key"]) + b"\x12" + _varint(len(any_)) + any_


def _field(tag: bytes, kind: str, sub: str, value: Any, out: bytearray) -> None:
    out += tag
    if kind == "msg":
        data = _keyvalue(value) if sub == "KeyValue" else message(sub, value)
    elif kind == "str":  # a lone surrogate (a hostile payload) cannot be UTF-8: '?'
        data = str(value).encode("utf-8", "replace")
    elif kind == "hex":
        data = bytes.fromhex(value)
    elif kind == "var":
        out += _varint(int(value))  # bool, enum, uint32, int64 as a decimal string
        return
    elif kind == "f64":
        out += _Q(int(value) & _MASK64)
        return
    elif kind == "f32":
        out += _I(int(value) & 0xFFFFFFFF)
        return
    else:
        out += _D(float(value))
        return
    out += _varint(len(data))
    out += data


def message(name: str, obj: dict[str, Any]) -> bytes:
    """`obj` (OTLP's JSON mapping of message `name`) in the protobuf wire format."""
    fields = _TABLE[name]
    out = bytearray()
    for key, value in obj.items():
        spec = fields.get(key)
        if spec is None:
            raise ValueError(f"no protobuf field for {name}.{key}")
        tag, kind, sub = spec
        if isinstance(value, list) and sub == "KeyValue":  # attributes: most of a request
            for item in value:
                data = _keyvalue(item)
                out += tag
                out += _varint(len(data))
                out += data
        elif isinstance(value, list):  # a repeated field: one entry per element
            for item in value:
                _field(tag, kind, sub, item, out)
        elif value is not None:
            _field(tag, kind, sub, value, out)
    return bytes(out)


def encode(request: dict[str, Any]) -> bytes:
    """An ExportLogsServiceRequest or ExportTraceServiceRequest (JSON mapping) as protobuf."""
    name = "ExportTraceServiceRequest" if "resourceSpans" in request else "ExportLogsServiceRequest"
    return message(name, request)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return n, pos


def _fields(data: bytes) -> dict[int, Any]:
    """The last value of each field of one message (varints and length-delimited bytes;
    fixed-width fields are stepped over)."""
    out: dict[int, Any] = {}
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        num, wire = tag >> 3, tag & 7
        if wire == 0:
            out[num], pos = _read_varint(data, pos)
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("truncated field")
            out[num], pos = data[pos : pos + size], pos + size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError("unsupported wire type")
    return out


def partial(body: bytes) -> tuple[int, str]:
    """(rejected count, error message) of an Export*ServiceResponse's partial_success;
    (0, "") for an empty body or one that does not parse."""
    try:
        top = _fields(body)
        inner = top.get(1)
        if not isinstance(inner, bytes):
            return 0, ""
        ps = _fields(inner)
        count = ps.get(1, 0)
        count = count - (1 << 64) if isinstance(count, int) and count >= 1 << 63 else count
        raw = ps.get(2, b"")
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
        return (max(0, count) if isinstance(count, int) else 0), text[:200]
    except (ValueError, IndexError):
        return 0, ""
