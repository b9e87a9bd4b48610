"""From a session record to what one rule's consumer receives: a pipeline of small stages.

    match(rule, record)            sections, then `where`        -> bool
    for_rule(record, ...)          copy + sensor, rule, rule_seq (and `test`)
    project(record, rule)          the rule's `fields:` (projection.py)
    mask(record, rule)             secret masking (SPEC section 7)
    seal(record, prev)             the hash chain, when `chain: true` (chain.py)

Every path that sends a record anywhere (the dispatcher, the blocking hook path, `fire`)
goes through `finish`, so no path can skip projection, masking or chaining. Projection
comes before masking and chaining: the chain covers exactly what the consumer receives,
and a field projected away is never scanned.

Bytes: `dumps` always gives valid UTF-8. A lone UTF-16 surrogate (a broken emoji in a
payload) becomes U+FFFD rather than a `\\ud83d` escape, which strict JSON parsers refuse
too; chain.canonical encodes the same way, so the chain hashes what is sent (utf8.py).
"""

from __future__ import annotations

import sys

from .. import jsoncore
from ..config.rules import LoadedRule
from ..utf8 import ERRORS
from . import chain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def match(rule: LoadedRule, record: dict[str, Any]) -> bool:
    return record.get("section") in rule.spec.sections and rule.where(record)


def for_rule(
    record: dict[str, Any], sensor: str, rule: str, rule_seq: int, test: bool = False
) -> dict[str, Any]:
    """A new top-level mapping over the record's values: no stage changes a nested value
    in place (projection and masking build new ones, sealing adds `chain` at the top),
    so one record can be finished for many rules without a deep copy each."""
    out = dict(record)
    out["sensor"], out["rule"], out["rule_seq"] = sensor, rule, rule_seq
    if test:
        out["test"] = True
    return out


def project(record: dict[str, Any], rule: LoadedRule) -> dict[str, Any]:
    """Keep what the rule's `fields:` says (projection.py); the record as it is without."""
    if rule.spec.fields is None:
        return record
    from ..config import projection

    return projection.project(record, rule.spec.fields)


def mask(record: dict[str, Any], rule: LoadedRule, deadline: float | None = None) -> dict[str, Any]:
    """Mask secrets unless the rule says `redact: none`, and the personal data of
    `redact: {kinds}` (redact/, imported at the first record that needs it and kept: an
    import statement per record costs). Past `deadline`
    the scan raises redact.MaskTimeout: the caller drops and counts the record, never
    sends it unmasked."""
    redact = rule.spec.redact
    if redact == "none":
        return record
    global _mask_record
    if _mask_record is None:
        from ..redact import mask_record

        _mask_record = mask_record
    if isinstance(redact, str):
        return _mask_record(record, deadline=deadline)
    return _mask_record(record, deadline=deadline, kinds=frozenset(redact.kinds))


_mask_record: Callable[..., dict[str, Any]] | None = None


def finish(
    record: dict[str, Any],
    rule: LoadedRule,
    rule_seq: int,
    prev: str,
    test: bool = False,
    deadline: float | None = None,
) -> tuple[dict[str, Any], str]:
    """The record a consumer receives, and the rule's next chain head; masking stops at
    `deadline` (the rule's own watchdog), so hostile text never holds a rule past it."""
    out = for_rule(record, rule.sensor, rule.name, rule_seq, test)
    out = mask(project(out, rule), rule, deadline)
    if rule.spec.chain:
        prev = chain.seal(out, prev)
    return out, prev


def dumps(record: dict[str, Any]) -> bytes:
    """The record as consumers receive it: one line of compact JSON in the record's key
    order, always valid UTF-8. msgspec writes it (json.dumps' bytes, but for how a float
    may be spelled: 1e16 for 1e+16, the same number), faster than json; json what
    msgspec refuses (a lone surrogate becomes U+FFFD, the same way chain.canonical
    hashes it: utf8.py; a value that is not JSON, as its str()).

    A process that has not loaded msgspec (a blocking rule's hook, where its import
    would be the largest cost: bench/RESULTS.md, Blocking path cost) writes with json
    alone, the same bytes but for a float's spelling; a float that is not finite (NaN or
    infinity, which a payload's JSON may spell) is written null there, as msgspec
    writes it."""
    global _encode
    if _encode is None:
        _encode = _msgspec_encoder() if "msgspec" in sys.modules else _json_encode
    try:
        return _encode(record)
    except Exception:
        return _json_encode(record, default=str)


_encode: Callable[[dict[str, Any]], bytes] | None = None


def _msgspec_encoder() -> Callable[[dict[str, Any]], bytes]:
    import msgspec

    encode: Callable[[dict[str, Any]], bytes] = msgspec.json.Encoder().encode
    return encode


def _json_encode(record: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    try:
        text = jsoncore.dumps(
            record, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default
        )
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        text = jsoncore.dumps(
            _finite(record), ensure_ascii=False, separators=(",", ":"), default=default
        )
    return text.encode("utf-8", ERRORS)


def _finite(value: Any) -> Any:
    """`value` with every NaN and infinity as None (null), as msgspec writes them."""
    if isinstance(value, float):
        return value if value - value == 0 else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
