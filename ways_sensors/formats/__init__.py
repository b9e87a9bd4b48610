"""Wire formats: one module per format, one registry line each. A record in, bytes out.

A format knows no transport; a target chooses one (its spec's `format`) and frames
what the format makes (a line in a file, a line on a command's stdin, an HTTP body, a
syslog MSG). Each module (`formats/<name>.py`) holds to the `Format` Protocol:

    MEDIA_TYPE                   the content type of one document
    BATCH                        how the documents of a batch make one body where the
                                 transport has no framing of its own (http): `array`
                                 (a JSON array) or `lines` (one document per line,
                                 NDJSON; Splunk HEC reads these as its concatenated
                                 events)
    encode(record, line)         one document, no trailing newline; `line` is the
                                 record's own JSON (pipeline.dumps), which `json`
                                 passes on untouched

    json         the record exactly as chained (docs/records.md); the default
    ndjson       the same documents, a batch one per line (the http target's framing
                 `ndjson`, media type application/x-ndjson)
    text         one readable line (the file target's `format: text`)
    ocsf         an OCSF event (ocsf.py has the class table)
    ecs          an Elastic Common Schema document (ecs.py)
    splunk_hec   a Splunk HTTP Event Collector event envelope (splunk_hec.py)

A request format (REQUESTS) makes one body of a whole batch rather than a document per
record: the batch's request is drawn by its target, the format gives its bytes, its
`MEDIA_TYPE`, and reads the answer's partial success (`partial(body)`):

    otlp_json       an OTLP request in OTLP's JSON mapping (the otlp target's default;
                    its log records: otlp_logs.py)
    otlp_protobuf   the same request in protobuf's wire format, written by hand

Which formats a target can carry is the target's to say (targets/<kind>.py `FORMATS`:
what its spec's format field names, and the format of this registry each sends); lint
tells a rule that asks a target for one it cannot carry where that format goes.

Every format but `text` carries the whole record, so nothing a rule dispatched is lost
in the mapping: OCSF in `raw_data`, ECS under `ways.*`, HEC in `event`. Only `json`
(and OCSF's `raw_data`) can be checked with `ways sensors verify`, since the chain
hashes the record, not the mapped document. Formats import nothing heavy: the file
target's blocking path may load them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from . import ecs, ndjson, ocsf, otlp_json, otlp_protobuf, splunk_hec, text
from . import json as json_record


class Format(Protocol):
    @property
    def MEDIA_TYPE(self) -> str: ...

    @property
    def BATCH(self) -> Literal["array", "lines"]: ...

    def encode(self, record: dict[str, Any], line: bytes) -> bytes: ...


class RequestFormat(Protocol):
    @property
    def MEDIA_TYPE(self) -> str: ...

    def encode(self, request: dict[str, Any]) -> bytes: ...

    def partial(self, body: bytes) -> tuple[int, str]: ...


FORMATS: dict[str, Format] = {
    "json": json_record,
    "ndjson": ndjson,
    "text": text,
    "ocsf": ocsf,
    "ecs": ecs,
    "splunk_hec": splunk_hec,
}
REQUESTS: dict[str, RequestFormat] = {
    "otlp_json": otlp_json,
    "otlp_protobuf": otlp_protobuf,
}
NAMES = (*FORMATS, *REQUESTS)  # every format, for messages

__all__ = [
    "FORMATS",
    "NAMES",
    "REQUESTS",
    "Format",
    "RequestFormat",
    "body",
    "encode",
    "get",
    "request",
]


def get(name: str) -> Format:
    return FORMATS[name]


def request(name: str) -> RequestFormat:
    return REQUESTS[name]


def encode(name: str, record: dict[str, Any], line: bytes) -> bytes:
    """One record as one document of format `name`."""
    return FORMATS[name].encode(record, line)


def body(docs: Sequence[bytes], batch: Literal["array", "lines"]) -> bytes:
    """Documents as one body: a JSON array, or one per line (each ending in a newline)."""
    if batch == "array":
        return b"[" + b",".join(docs) + b"]"
    return b"".join(d + b"\n" for d in docs)
