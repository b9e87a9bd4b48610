"""How deep a record may nest: values below DEPTH_MAX levels travel as their JSON text.

A payload (a tool's input, an MCP result, a way event) can nest as deep as JSON parsing
allows, about 1,000 levels. Every stage after the record is built walks it: `where`,
projection, masking (two Python frames a level), the chain's canonical JSON, each
target's encoding. Rather than each stage guarding its own recursion (and an
`at_least_once` record failing wherever the first one gives up: the first hostile pass
found 900 levels dropped as `lost`, and `ways sensors fire` crashing), records.envelope
bounds the record's `data` once, where every record is made: a value that sits deeper
than DEPTH_MAX levels below `data` is replaced by a string, its compact JSON text
(written without recursion). Nothing is lost: the text parses back to the value, is
masked like any other string, and is covered by the chain; consumers see a string where
an object or array was, and only in records no genuine agent produces.

Shallow data (every real record) is returned as it is, after one walk that stops as
soon as it is sure; only data that does nest too deep is copied, down to DEPTH_MAX.
"""

from __future__ import annotations

from . import jsoncore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEPTH_MAX = 100  # levels below `data`; masking needs two frames a level, Python ~1,000


def too_deep(value: Any, limit: int = DEPTH_MAX) -> bool:
    """True when a container sits more than `limit` levels down (no recursion)."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0  # of the containers in `level`: one level at a time, no tuple per child
    while level:
        if depth >= limit:
            return True
        below = []
        for v in level:
            for c in v.values() if isinstance(v, dict) else v:
                if isinstance(c, (dict, list)):
                    below.append(c)
        level = below
        depth += 1
    return False


class _Token(str):
    """Text to emit as it is (not a string value to encode)."""


def json_text(value: Any) -> str:
    """Compact JSON of `value`, however deep (an explicit stack, never recursion); a
    value JSON has no form for is written as its str(), as pipeline.dumps does."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Token):
            out.append(v)
        elif isinstance(v, dict):
            items = list(v.items())
            stack.append(_Token("}"))
            for i in range(len(items) - 1, -1, -1):
                k, x = items[i]
                stack.append(x)
                key = jsoncore.dumps(k if isinstance(k, str) else str(k), ensure_ascii=False)
                stack.append(_Token(("," if i else "") + key + ":"))
            out.append("{")
        elif isinstance(v, list):
            stack.append(_Token("]"))
            for i in range(len(v) - 1, -1, -1):
                stack.append(v[i])
                if i:
                    stack.append(_Token(","))
            out.append("[")
        else:
            out.append(jsoncore.dumps(v, ensure_ascii=False, default=str))
    return "".join(out)


def bounded(value: Any, limit: int = DEPTH_MAX) -> Any:
    """`value` itself when nothing in it is deeper than `limit`; else a copy whose
    containers at depth `limit` are their JSON text."""
    if not too_deep(value, limit):
        return value
    return _cut(value, limit)


def _cut(value: Any, left: int) -> Any:
    if not isinstance(value, (dict, list)):
        return value
    if left <= 0:
        return json_text(value)
    if isinstance(value, dict):
        return {k: _cut(v, left - 1) for k, v in value.items()}
    return [_cut(v, left - 1) for v in value]
