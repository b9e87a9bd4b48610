"""One compact JSON encoder for the mapped formats: msgspec where it can (several times
json's speed on a record), json where msgspec refuses (a lone surrogate becomes U+FFFD,
as pipeline.dumps does; a value that is not JSON, its str())."""

from __future__ import annotations

from typing import Any

import msgspec

from ..utf8 import ERRORS

_encode = msgspec.json.Encoder().encode


def dumps(obj: Any) -> bytes:
    try:
        return _encode(obj)
    except Exception:
        import json

        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode(
            "utf-8", ERRORS
        )
