"""Secret masking for every dispatched record (SPEC section 7).

Every string in the record (nested input, output, extra fields) is scanned; a secret
becomes `[REDACTED:<kind>:<token>]`, where `<token>` is the first 8 hex digits of
HMAC-SHA256(key, secret) under the per-install key (key.py): the same secret gives the
same token in every record, rule and session of one install. The record's `redactions`
lists kind, path and token (never the secret).

The scan, in order (an earlier detector's span wins an overlap):
  shapes.py     PEM private keys; provider tokens and the structures that need no
                vendor name (prefixed tokens, Discord and Telegram bot tokens, a key
                id's adjacent secret), all from one pass over the text's token runs
  structure.py  URL userinfo passwords and webhook URLs, credential query
                parameters, password flags of known command-line programs
  keyvalue.py   values assigned to secret names, in every format; `Bearer` tokens
values.py judges each value found (references, code reading a secret, placeholders).

Cost: linear in the text, whatever it holds (scan.py says why); `mask_record` and
`mask_text` take an optional `deadline` (a `time.monotonic()` instant) and raise
`MaskTimeout` past it, so a caller can drop the record, counted, instead of sending it
unmasked. `find` lists the spans without masking.

Short strings are remembered. A session's records repeat most of their strings (the
session id, the working folder, the transcript path, the event, tool and agent names):
the spans of a string of at most SHORT characters are kept, for the REMEMBERED most
recently used ones (at most 2 MB of ASCII text, 8 MB of any), so a repeated string costs
one dictionary lookup instead of seven detectors (masking is the largest share of a
drain's CPU: bench/RESULTS.md, The drain against a reference pipeline). The spans depend
on the text alone (the token, which depends on the key, is computed after), so a
remembered answer is the answer. A light process (regex.light(): a blocking hook, which
masks a record or two) remembers nothing: functools' import would cost it more than the
memo saves.
"""

from __future__ import annotations

import time

from .. import regex
from . import keyvalue, shapes, structure
from .key import KEY_BYTES, KeyRefused, install_key, key_path, key_status, token
from .scan import MaskTimeout, Scan, Work, measure, measuring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "KEY_BYTES",
    "KINDS",
    "KeyRefused",
    "MaskTimeout",
    "Work",
    "find",
    "install_key",
    "key_path",
    "key_status",
    "mask_record",
    "mask_text",
    "measure",
    "token",
]

SCAN = Scan(
    [
        shapes.detect_private_keys,
        shapes.detect_tokens,
        structure.detect_urls,
        structure.detect_cli,
        keyvalue.detect,
        structure.detect_query,
        keyvalue.detect_bearer,
    ]
)
KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        ["private-key"]
        + [s.kind for s in shapes.SHAPES if s.mask]
        + [s.pair.kind for s in shapes.SHAPES if s.pair is not None]
        + ["discord-bot-token", "telegram-bot-token", "prefixed-api-token"]
        + ["slack-webhook", "discord-webhook", "connection-string-password", "url-query-secret"]
        + ["cli-password", "secret-field", "env-assignment", "prose-password", "api-key-header"]
        + ["azure-storage-key", "bearer-token", "basic-auth-header"]
    )
)
MIN_SECRET = 8  # no detector matches fewer characters (`PWD=abcd` is about the shortest)
SHORT = 512  # strings up to this long have their spans remembered ...
REMEMBERED = 4096  # ... this many of them, the least recently used forgotten first


def _spans(text: str) -> tuple[tuple[int, int, str], ...]:
    # no deadline inside: a scan of at most SHORT characters is a few of scan.py's
    # bounded work units per detector; `find` checks the deadline before it asks
    return tuple(SCAN.find(text))


def _remembered() -> Callable[[str], tuple[tuple[int, int, str], ...]]:
    if regex.is_light():
        return _spans
    import functools

    return functools.lru_cache(maxsize=REMEMBERED)(_spans)


_find_short = _remembered()


def find(text: str, deadline: float | None = None) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in `text`, without overlaps, in order."""
    n = len(text)
    if n < MIN_SECRET:
        return []
    if n <= SHORT and not measuring():  # a measured scan counts its work: never skip it
        if deadline is not None and time.monotonic() > deadline:
            raise MaskTimeout()
        return list(_find_short(text))
    return SCAN.find(text, deadline)


def mask_text(text: str, deadline: float | None = None) -> tuple[str, list[tuple[str, str]]]:
    """The text with every secret replaced, and [(kind, token)] in order of appearance."""
    spans = find(text, deadline)
    if not spans:
        return text, []
    out, found, pos = [], [], 0
    for start, end, kind in spans:
        t = token(text[start:end])
        out.append(text[pos:start])
        out.append(f"[REDACTED:{kind}:{t}]")
        found.append((kind, t))
        pos = end
    out.append(text[pos:])
    return "".join(out), found


def _walk(
    value: Any, at: tuple[Any, ...], found: list[dict[str, str]], deadline: float | None
) -> Any:
    """`value` masked; `at` is its path as keys and indexes, spelled `a.b.0` only for a
    hit: most strings have none, and a path spelled for each would cost masking more
    than its hits do."""
    if isinstance(value, str):
        masked, hits = mask_text(value, deadline)
        if hits:
            path = ".".join(map(str, at))
            found.extend({"kind": k, "path": path, "token": t} for k, t in hits)
        return masked
    if isinstance(value, dict):
        return {k: _walk(v, (*at, k), found, deadline) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, (*at, i), found, deadline) for i, v in enumerate(value)]
    return value


def mask_record(record: dict[str, Any], deadline: float | None = None) -> dict[str, Any]:
    """The record with every string masked and, when anything was, `redactions` set.
    Past `deadline` (time.monotonic()), MaskTimeout: drop the record, never send it."""
    found: list[dict[str, str]] = []
    out = {
        k: (v if k in ("schema", "chain", "redactions") else _walk(v, (k,), found, deadline))
        for k, v in record.items()
    }
    if found:
        out["redactions"] = found
    return out
