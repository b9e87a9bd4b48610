"""`ndjson`: the records as `json` sends them, a batch one per line (newline-delimited
JSON), for consumers that read a stream of documents rather than an array."""

from __future__ import annotations

from typing import Any, Final, Literal

MEDIA_TYPE: Final = "application/x-ndjson"
BATCH: Final[Literal["array", "lines"]] = "lines"


def encode(record: dict[str, Any], line: bytes) -> bytes:
    return line
