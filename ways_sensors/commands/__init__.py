"""One module per command; each exposes `run(args) -> int` and is imported only when chosen."""

from __future__ import annotations

from typing import Any


def read_json_object(source: str | None, what: str = "--input") -> dict[str, Any]:
    """One JSON object from a file, or from stdin for None or `-`; UsageError otherwise."""
    import json
    import sys

    from ..errors import UsageError

    try:
        if source in (None, "-"):
            text = sys.stdin.read()
        else:
            with open(source) as f:
                text = f.read()
        data = json.loads(text)
    except RecursionError:
        raise UsageError(
            f"cannot read a JSON object from {source or 'stdin'}: it is nested more deeply "
            "than JSON parsing allows (about 1,000 levels)"
        ) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read a JSON object from {source or 'stdin'}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{what} takes one JSON object")
    return data
