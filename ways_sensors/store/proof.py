"""What proves a stored record: the records of its rule's tree up to its last signed
checkpoint (one covers the record; the last is the tree's end once the session ended,
so the file proves its end too: evidence/offline.py), with the checkpoints among them,
as the JSON lines the rule delivered them (a file `ways sensors verify FILE --key
ROOTKEY` checks: it rebuilds the tree's root from every leaf, checks the checkpoint's
signature up to the root key, and the hash chain from the first record).

Only a record of a rule with `chain: true` has one (its checkpoints are kept in the
store's `checkpoints` table); an imported record, or one of a rule without a chain,
has nothing to prove, and a record no checkpoint covers yet (its batch's checkpoint not
delivered) neither: `Unproven` says which.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any


class Unproven(LookupError):
    """No proof for the record; `str()` says why, content-free."""


def proof(conn: sqlite3.Connection, sid: str, seq: int) -> dict[str, Any]:
    """{"record", "rule", "tree_size", "proof"}: `proof` the JSON lines to verify."""
    row = conn.execute(
        "SELECT sensor, rule, rule_seq, record FROM records WHERE session_id = ? AND seq = ? "
        "AND imported = 0 ORDER BY (record LIKE '%\"chain\":%') DESC, id LIMIT 1",
        (sid, seq),
    ).fetchone()
    if row is None:
        raise Unproven(f"no record {seq} of session {sid} recorded live in the store")
    sensor, rule, rule_seq, text = row
    record = json.loads(text)
    if "chain" not in record:
        raise Unproven(f"its rule {sensor}/{rule} has no chain: nothing to prove")
    key = (sensor, rule, sid)
    covering = conn.execute(
        "SELECT min(last_rule_seq) FROM checkpoints WHERE sensor = ? AND rule = ? "
        "AND session_id = ? AND last_rule_seq >= ?",
        (*key, rule_seq),
    ).fetchone()[0]
    if covering is None:
        raise Unproven("no signed checkpoint covers it yet")
    covering = conn.execute(
        "SELECT max(last_rule_seq) FROM checkpoints WHERE sensor = ? AND rule = ? "
        "AND session_id = ?",
        key,
    ).fetchone()[0]
    checkpoints: dict[int, list[str]] = {}
    for n, line in conn.execute(
        "SELECT last_rule_seq, record FROM checkpoints WHERE sensor = ? AND rule = ? "
        "AND session_id = ? AND last_rule_seq <= ? ORDER BY size",
        (*key, covering),
    ):
        checkpoints.setdefault(n, []).append(line)
    lines = []
    for n, line in conn.execute(
        "SELECT rule_seq, record FROM records WHERE sensor = ? AND rule = ? "
        "AND session_id = ? AND rule_seq <= ? ORDER BY rule_seq",
        (*key, covering),
    ):
        lines.append(line)
        lines += checkpoints.get(n, [])
    return {
        "record": record,
        "rule": f"{sensor}/{rule}",
        "tree_size": covering,
        "proof": "\n".join(lines) + "\n",
    }
