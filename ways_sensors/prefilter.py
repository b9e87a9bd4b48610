"""The blocking path's first question, answered on the raw payload: can any enabled
blocking rule's `where` hold for this event's records?

Building records, masking and targets are most of what a blocking hook imports
(bench/RESULTS.md, Blocking path cost). Most events a blocking rule selects by
section fail its `where` (a rule on `data.tool_name: Bash` sees every Read), so the hook
asks this module first and pays for the rest only when the answer is "maybe". The
answer "no" must be exact: it is given only for a condition that is decided, and a
condition is decided only when

  - the event's records of the rule's sections are tool calls or results, and the
    agent's face says which top-level payload string each of their record paths copies
    as is (AgentFace.VERBATIM: `data.tool_name` from `tool_name`, for the events that
    copy it; tests/test_prefilter.py checks every claim against the recorded payloads),
  - the hook's scan reads that payload string (hook.string_field: absent, not a string
    or too deep reads as unknown), and
  - the test is equality, `not`, `in` or `contains` on strings (a glob, a regular
    expression, a number: unknown).

`match: all` fails when one condition is decided false; `match: any` when every one is.
Anything undecided means "maybe": the full path builds the records and runs `where`
as it would without this module, so a rule fires on precisely the same records.

The index (index.py) carries one line per enabled blocking rule, written by indexbuild
with `line_for`, read here without a JSON library:

    <section>,<section>... <all|any> <condition> <condition> ...

each condition `<op>:<path hex>:<value hex>.<value hex>...` (UTF-8, hex so that any text
fits a space-separated line), op one of eq, ne, in, has, or `?` for one not decided
here. Stdlib-only and import-free: it runs in the hook.
"""

TYPE_CHECKING = False  # type checkers read it as True; `typing` imports `re`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

TOOL_SECTIONS = ("tool_call", "tool_result")
_GLOB = ("*", "?", "[")


def _hex(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").hex()


def _text(h: str) -> str:
    return bytes.fromhex(h).decode("utf-8", "surrogatepass")


def _condition(path: str, value: "Any") -> str:
    """One condition in the index's form (the module docstring)."""
    if isinstance(value, str):
        return "?" if any(c in value for c in _GLOB) else "eq:%s:%s" % (_hex(path), _hex(value))
    if isinstance(value, dict) and len(value) == 1:
        ((op, operand),) = value.items()
        if op == "equals" and isinstance(operand, str):
            return "eq:%s:%s" % (_hex(path), _hex(operand))
        if op == "not" and isinstance(operand, str) and not any(c in operand for c in _GLOB):
            return "ne:%s:%s" % (_hex(path), _hex(operand))
        if op == "in" and isinstance(operand, list):
            items = [_hex(x) for x in operand if isinstance(x, str)]
            return "in:%s:%s" % (_hex(path), ".".join(items))
        if op == "contains" and isinstance(operand, str):
            return "has:%s:%s" % (_hex(path), _hex(operand))
    return "?"


def line_for(sections: "Iterable[str]", where: "Mapping[str, Any] | None", match: str) -> str:
    """A blocking rule's line in the index (indexbuild)."""
    conds = [_condition(str(k), v) for k, v in (where or {}).items()]
    return " ".join([",".join(sections), "any" if match == "any" else "all", *conds])


def _decide(
    cond: str, copies: "Mapping[str, bytes]", field: "Callable[[bytes], str | None]"
) -> "bool | None":
    """True or False when the payload decides the condition, None when it cannot."""
    op, _, rest = cond.partition(":")
    path, _, values = rest.partition(":")
    if op == "?":
        return None
    key = copies.get(_text(path))
    s = field(key) if key is not None else None
    if s is None:
        return None
    wanted = [_text(v) for v in values.split(".") if v] if op == "in" else [_text(values)]
    if op == "eq":
        return s == wanted[0]
    if op == "ne":
        return s != wanted[0]
    if op == "in":
        return s in wanted
    if op == "has":
        return wanted[0] in s
    return None


def may_match(
    lines: "Iterable[str]",
    copies: "Mapping[str, bytes] | None",
    sections: "Iterable[str]",
    field: "Callable[[bytes], str | None]",
) -> bool:
    """False when no blocking rule's `where` can hold for the event's records: `copies`
    is the face's VERBATIM entry for the event (None: nothing is copied as is),
    `sections` the event's sections, `field` the hook's scan of the payload."""
    yields = set(sections)
    for line in lines:
        secs, _, rest = line.partition(" ")
        match, _, conds = rest.partition(" ")
        wanted = [s for s in secs.split(",") if s in yields]
        if not wanted:
            continue  # this rule selects none of the event's sections
        if copies is None or not conds or any(s not in TOOL_SECTIONS for s in wanted):
            return True
        results = [_decide(c, copies, field) for c in conds.split(" ")]
        if match == "any":
            if any(r is not False for r in results):
                return True
        elif False not in results:
            return True
    return False
