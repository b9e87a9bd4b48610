"""Record text as bytes, always valid UTF-8: the `ways-surrogates` encode error handler.

A hook payload may carry a lone UTF-16 surrogate (`"\\ud83d"`, half of a broken emoji):
JSON allows the escape, Python decodes it to a lone code point, and UTF-8 cannot encode
one. Passed through (`surrogatepass`), it made bytes that are not UTF-8, which a strict
consumer refuses (HTTP 400) for good. So every path that turns a record into bytes
encodes with `ERRORS`: pipeline.dumps (what every consumer and dead-letter file
receives), chain.canonical (what the chain hashes, so a chain hashes what is sent and
`ways sensors verify` re-hashes the same bytes), the journal (journal.encode), the blocking
path's retry entries, the file target's text lines.

The choice: a lone surrogate becomes U+FFFD (the replacement character), once per code
unit; a high surrogate followed by a low one, held as two code points, becomes the one
character they encode. Escaping it as `\\ud83d` in JSON would keep the broken half, but
strict JSON parsers refuse a lone surrogate escape too (RFC 8259 leaves its meaning
undefined; serde_json and PostgreSQL's jsonb reject it), and a record must reach every
consumer. Text without surrogates never reaches the handler: the cost is nil.
Stdlib-only (the blocking path runs it in the hook).
"""

from __future__ import annotations

import codecs

ERRORS = "ways-surrogates"


def _replace(exc: UnicodeError) -> tuple[bytes, int]:
    """The run of surrogates CPython hands over, as UTF-8: pairs joined, lone ones
    U+FFFD. Bytes, since the UTF-8 encoder takes only ASCII text from a handler."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    run = exc.object[exc.start : exc.end]
    fixed = run.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed.encode("utf-8", "replace"), exc.end


codecs.register_error(ERRORS, _replace)


def encode(text: str) -> bytes:
    """`text` as valid UTF-8, lone surrogates replaced (see the module docstring)."""
    return text.encode("utf-8", ERRORS)


def clean(text: str) -> str:
    """`text` as it is sent: for a record printed to a terminal (`fire --dry-run`, the
    preview of `ways sensors test`), which would otherwise fail to encode it."""
    return encode(text).decode("utf-8")
