"""A break: the first thing found wrong in a chain, a tree or a line, as every checker
reports it (verify's links and rules, the line reader, and evidence's tree and note
checks), with one JSON shape for `ways sensors verify --json`.

`kind` names what broke (verify/__init__.py lists the chain kinds, evidence/offline.py
the tree kinds; `torn` is the unfinished end of a line a writer killed mid-line left);
`line` is 0 or None when the break belongs to no line (a session with no record left, a
note that does not verify).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any


@dataclass
class Break:
    kind: str
    message: str
    _: KW_ONLY
    line: int | None = None
    rule_seq: int | None = None
    session_id: str | None = None
    file: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "line": self.line,
            "rule_seq": self.rule_seq,
            "message": self.message,
            "session_id": self.session_id,
            "file": self.file,
        }
