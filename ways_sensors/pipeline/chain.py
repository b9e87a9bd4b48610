"""Hash chains over one rule's records (SPEC section 8).

    hash = sha256(prev + "\\n" + canonical JSON of the record without its `chain` field)

canonical: sorted keys, no spaces, UTF-8 (non-ASCII kept as is, a lone surrogate as
U+FFFD, as pipeline.dumps sends it: utf8.py). The first `prev` is
64 zeros. A chain runs per rule and per session, like `rule_seq`: one session's
dispatcher is the only writer of its async rules, so no lock spans sessions, and a file
that holds many sessions holds one chain per session (verify checks each).
"""

from __future__ import annotations

from .. import jsoncore
from ..sha import sha256_hex
from ..utf8 import ERRORS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GENESIS = "0" * 64


def canonical(record: dict[str, Any]) -> bytes:
    # a record is sealed before it has a `chain` (seal below): copied only to verify one
    body = {k: v for k, v in record.items() if k != "chain"} if "chain" in record else record
    return jsoncore.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", ERRORS
    )


def link(prev: str, record: dict[str, Any]) -> str:
    return sha256_hex(prev.encode() + b"\n" + canonical(record))


def seal(record: dict[str, Any], prev: str) -> str:
    """Add the `chain` field to `record` and return its hash (the next `prev`)."""
    h = link(prev, record)
    record["chain"] = {"prev": prev, "hash": h}
    return h
