"""Secret masking for every dispatched record (SPEC section 7).

Every string in the record (nested input, output, extra fields) is scanned; a secret
becomes `[REDACTED:<kind>:<token>]`, where `<token>` is the first 8 hex digits of
HMAC-SHA256(key, secret) under the per-install key (key.py): the same secret gives the
same token in every record, rule and session of one install. The record's `redactions`
lists kind, path and token (never the secret).

The scan, in order (an earlier detector's span wins an overlap):
  needles.py    (after PEM keys) the catalogue families whose values cut token runs
                short (base64 bodies, URL-shaped credentials), by a literal needle, in
                one pass; the families and where they come from: docs/masking.md
  shapes.py     PEM private keys; provider tokens and the structures that need no
                vendor name (prefixed tokens, Discord and Telegram bot tokens, a key
                id's adjacent secret), all from one pass over the text's token runs
  structure.py  URL userinfo passwords and webhook URLs, credential query
                parameters, password flags of known command-line programs
  keyvalue.py   values assigned to secret names, in every format; `Bearer` tokens
values.py judges each value found (references, code reading a secret, placeholders),
placeholders.py a catalogue shape's (a repeated-character body, a Secrets Manager ARN);
pii.py finds the personal data a rule asks for (`redact: {kinds: [...]}`).

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
from . import keyvalue, needles, placeholders, shapes, structure
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
        needles.detect,
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
        + [n.kind for n in needles.NEEDLES]
        + ["discord-bot-token", "telegram-bot-token", "prefixed-api-token"]
        + ["slack-webhook", "discord-webhook", "connection-string-password", "url-query-secret"]
        + ["cli-password", "secret-field", "env-assignment", "prose-password", "api-key-header"]
        + ["azure-storage-key", "bearer-token", "basic-auth-header"]
    )
)
MIN_SECRET = 8  # no detector matches fewer characters (`PWD=abcd` is about the shortest)
SHORT = 512  # strings up to this long have their spans remembered ...
REMEMBERED = 4096  # ... this many of them, the least recently used forgotten first


def _scan(text: str, deadline: float | None = None) -> list[tuple[int, int, str]]:
    spans = SCAN.find(text, deadline)
    if spans and "arn:aws" in text:  # an ARN names a secret: `secret:<name>` holds none
        spans = [s for s in spans if not placeholders.in_secret_arn(text, s[0])]
    return spans


def _spans(text: str) -> tuple[tuple[int, int, str], ...]:
    # no deadline inside: a scan of at most SHORT characters is a few of scan.py's
    # bounded work units per detector; `find` checks the deadline before it asks
    return tuple(_scan(text))


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
    return _scan(text, deadline)


def _with_personal(
    text: str, spans: list[tuple[int, int, str]], kinds: frozenset[str]
) -> list[tuple[int, int, str]]:
    """The secrets' spans and the personal data's of `kinds` (pii.py) outside them."""
    from . import pii  # only a rule that names kinds gets here

    taken = bytearray(len(text))
    for start, end, _ in spans:
        taken[start:end] = b"\x01" * (end - start)
    return sorted(spans + pii.find(text, kinds, taken))


def mask_text(
    text: str, deadline: float | None = None, kinds: frozenset[str] = frozenset()
) -> tuple[str, list[tuple[str, str]]]:
    """The text with every secret (and the personal data of `kinds`) replaced, and
    [(kind, token)] in order of appearance."""
    spans = find(text, deadline)
    if kinds:
        spans = _with_personal(text, spans, kinds)
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
    value: Any,
    at: tuple[Any, ...],
    found: list[dict[str, str]],
    deadline: float | None,
    kinds: frozenset[str],
) -> Any:
    """`value` masked; `at` is its path as keys and indexes, spelled `a.b.0` only for a
    hit: most strings have none, and a path spelled for each would cost masking more
    than its hits do."""
    if isinstance(value, str):
        masked, hits = mask_text(value, deadline, kinds)
        if hits:
            path = ".".join(map(str, at))
            found.extend({"kind": k, "path": path, "token": t} for k, t in hits)
        return masked
    if isinstance(value, dict):
        return {k: _walk(v, (*at, k), found, deadline, kinds) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, (*at, i), found, deadline, kinds) for i, v in enumerate(value)]
    return value


def mask_record(
    record: dict[str, Any], deadline: float | None = None, kinds: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The record with every string masked (secrets, and the personal data of `kinds`)
    and, when anything was, `redactions` set. Past `deadline` (time.monotonic()),
    MaskTimeout: drop the record, never send it."""
    found: list[dict[str, str]] = []
    out = {
        k: (v if k in ("schema", "chain", "redactions") else _walk(v, (k,), found, deadline, kinds))
        for k, v in record.items()
    }
    if found:
        out["redactions"] = found
    return out
