"""`json`: the record as it was chained, one compact JSON object (docs/records.md)."""

from __future__ import annotations

from typing import Any, Final, Literal

MEDIA_TYPE: Final = "application/json"
BATCH: Final[Literal["array", "lines"]] = "array"


def encode(record: dict[str, Any], line: bytes) -> bytes:
    return line
