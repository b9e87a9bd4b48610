"""`headers_helper:` of the http and otlp targets: short-lived credentials from a command.

    headers_helper: {argv: [/usr/local/bin/collector-token], refresh: 5m}

The command (run without a shell, for at most HELPER_TIMEOUT seconds, stdin empty)
prints one JSON object of header name -> value, as Claude Code's `otelHeadersHelper`
does; its headers are sent over the rule's own `headers`. The answer is kept for
`refresh` (default 5 minutes) and asked for again before then is up, and at once when
the server answers 401: the request is then sent once more with the new headers. One
answer per process and argv, shared by every rule that names the same command, so one
helper run never leaves an older token in use beside a newer one.

Neither the headers nor the command's output are ever logged or kept on disk: a helper
that fails is reported by its exit status or `timeout` alone (the attempt is retryable,
so the record waits and is counted as an error until the helper works).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Annotated

from msgspec import Meta, Struct

from .timing import DURATION_PATTERN, parse_duration

HELPER_TIMEOUT = 10.0
OUTPUT_MAX = 64 * 1024


class HeadersHelper(Struct, forbid_unknown_fields=True, omit_defaults=True):
    argv: Annotated[list[str], Meta(min_length=1, description="the command, no shell")]
    refresh: Annotated[
        float | Annotated[str, Meta(pattern=DURATION_PATTERN)],
        Meta(description="how long an answer is used before the command runs again"),
    ] = "5m"

    def __post_init__(self) -> None:
        parse_duration(self.refresh)


class HelperError(Exception):
    """The helper gave no headers; the message says why without its output."""


_cache: dict[tuple[str, ...], tuple[float, dict[str, str]]] = {}
_lock = threading.Lock()


def _run(argv: list[str]) -> dict[str, str]:
    import subprocess

    try:
        r = subprocess.run(
            argv, capture_output=True, timeout=HELPER_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise HelperError("headers_helper: timeout") from None
    except OSError as exc:
        raise HelperError(f"headers_helper: {exc.strerror or type(exc).__name__}") from None
    if r.returncode != 0:
        raise HelperError(f"headers_helper: exit {r.returncode}")
    try:
        got = json.loads(r.stdout) if len(r.stdout) <= OUTPUT_MAX else None
    except ValueError:
        got = None
    if not isinstance(got, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in got.items()
    ):
        raise HelperError("headers_helper: stdout is not a JSON object of strings")
    return got


def headers(helper: HeadersHelper, renew: bool = False) -> dict[str, str]:
    """The helper's headers: kept ones while fresh, else (or with `renew`) new ones."""
    key = tuple(helper.argv)
    with _lock:  # one run at a time per process: no two answers in use at once
        now = time.monotonic()
        kept = _cache.get(key)
        if kept and not renew and now - kept[0] < parse_duration(helper.refresh):
            return dict(kept[1])
        fresh = _run(helper.argv)
        _cache[key] = (time.monotonic(), fresh)
        return dict(fresh)
