r"""`where` conditions (agent-ways ADR-403 §3, §8): compile once, evaluate per record.

Each key is a dotted path into the record (`data.tool_name`, `data.input.command`,
`agent_type`); a segment may hold glob characters (`data.input.*` tests every field
there, and the condition holds when any of them passes). Each value is a scalar
(equality; a string with `*`, `?` or `[...]` is a glob) or a mapping with exactly one
operator. No nesting. A path that reaches no field fails its condition, `not` included.

Compilation does all the checking (unknown operators, bad regular expressions, wrong
operand types), so a rule that loads never fails at dispatch time.

`matches` runs on RE2 (google-re2), not Python's `re`: the text it searches is
model-controlled (a tool input), and a backtracking engine lets one pattern such as
`^(\w+\s?)+$` burn minutes on 41 characters while holding the interpreter lock, which
stops every other rule of the dispatcher. RE2 searches in time linear in the text, so it
cannot compile what needs backtracking (backreferences, look-around, atomic groups,
possessive quantifiers); those are refused at compile time, so `lint` names them. Other
differences a Python user may meet: `\z` (not `\Z`) ends the text, `$` does not match
before a final newline unless `(?m)`, and `\w`, `\d`, `\s`, `\b` are ASCII-only.
"""

from __future__ import annotations

from ..plain import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

OPERATORS = ("equals", "not", "in", "contains", "like", "matches", "above", "below")
_GLOB_CHARS = frozenset("*?[")


class ConditionError(ValueError):
    """A condition that cannot be compiled; `key` is its path as written."""

    def __init__(self, key: str, message: str):
        super().__init__(f"where {key!r}: {message}")
        self.key = key
        self.message = message


def is_glob(text: str) -> bool:
    return any(c in _GLOB_CHARS for c in text)


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def resolve(record: Any, segments: tuple[str, ...]) -> Iterator[Any]:
    """Every value the path reaches; globbed segments fan out, missing ones yield nothing."""
    if not segments:
        yield record
        return
    head, rest = segments[0], segments[1:]
    if isinstance(record, dict):
        if is_glob(head):
            for k, v in record.items():
                if isinstance(k, str) and fnmatchcase(k, head):
                    yield from resolve(v, rest)
        elif head in record:
            yield from resolve(record[head], rest)
    elif isinstance(record, list):
        if is_glob(head):
            for i, v in enumerate(record):
                if fnmatchcase(str(i), head):
                    yield from resolve(v, rest)
        elif head.isdigit() and int(head) < len(record):
            yield from resolve(record[int(head)], rest)


def _equal(a: Any, b: Any) -> bool:
    """Equality without Python's True == 1 coercion."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _scalar_test(expected: Any) -> Callable[[Any], bool]:
    if isinstance(expected, str) and is_glob(expected):
        return lambda v: isinstance(v, str) and fnmatchcase(v, expected)
    return lambda v: _equal(v, expected)


def _compile_test(key: str, value: Any) -> Callable[[Any], bool]:
    if _is_scalar(value):
        return _scalar_test(value)
    if not isinstance(value, dict):
        raise ConditionError(key, "a value is a scalar or a mapping with one operator")
    if len(value) != 1:
        raise ConditionError(
            key, f"an operator mapping holds exactly one of {', '.join(OPERATORS)}"
        )
    ((op, operand),) = value.items()
    if op not in OPERATORS:
        hint = _closest(str(op))
        raise ConditionError(
            key, f"unknown operator {op!r}" + (f"; did you mean {hint!r}?" if hint else "")
        )
    if op == "equals":
        if not _is_scalar(operand):
            raise ConditionError(key, "equals takes a scalar")
        return lambda v: _equal(v, operand)
    if op == "not":
        if not _is_scalar(operand):
            raise ConditionError(key, "not takes a scalar")
        test = _scalar_test(operand)
        return lambda v: not test(v)
    if op == "in":
        if not isinstance(operand, list) or not all(_is_scalar(x) for x in operand):
            raise ConditionError(key, "in takes a list of scalars")
        items = list(operand)
        return lambda v: any(_equal(v, x) for x in items)
    if op == "contains":
        if not _is_scalar(operand) or operand is None:
            raise ConditionError(key, "contains takes a string or a scalar list element")

        def contains(v: Any) -> bool:
            if isinstance(v, str):
                return isinstance(operand, str) and operand in v
            if isinstance(v, list):
                return any(_equal(x, operand) for x in v)
            if isinstance(v, dict):
                return isinstance(operand, str) and operand in v
            return False

        return contains
    if op == "like":
        if not isinstance(operand, str):
            raise ConditionError(key, "like takes a glob pattern string")
        return lambda v: isinstance(v, str) and fnmatchcase(v, operand)
    if op == "matches":
        if not isinstance(operand, str):
            raise ConditionError(key, "matches takes a regular expression string")
        rx = _compile_regex(key, operand)
        return lambda v: isinstance(v, str) and rx.search(_utf8(v)) is not None
    # above / below
    if not _is_number(operand):
        raise ConditionError(key, f"{op} takes a number")
    if op == "above":
        return lambda v: _is_number(v) and v > operand
    return lambda v: _is_number(v) and v < operand


_BACKREF_HINT = "spell out the alternatives, e.g. (a|b)x(a|b)"
# what RE2 refused (the text after its error's ": ") -> (construct, how to do without it)
_UNSUPPORTED = (
    ("(?=", "look-ahead (?=...)", "match the text it looks for, or add a second condition"),
    ("(?!", "negative look-ahead (?!...)", "test the text in a second condition instead"),
    ("(?<=", "look-behind (?<=...)", "match the preceding text as part of the pattern"),
    ("(?<!", "negative look-behind (?<!...)", "test the text in a second condition instead"),
    ("(?P=", "named backreference (?P=name)", _BACKREF_HINT),
    ("\\k", "named backreference \\k<name>", _BACKREF_HINT),
    ("(?>", "atomic group (?>...)", "use a plain group (?:...): RE2 never backtracks"),
    ("(?#", "comment group (?#...)", "remove the comment"),
    ("(?(", "conditional group (?(...)...)", "write both cases as alternatives a|b"),
    ("(?x", "verbose mode (?x)", "remove it and the whitespace and comments it allowed"),
    ("\\Z", "\\Z", "write \\z for the end of the text"),
    ("\\u", "the \\u escape", "write the character itself, or \\x{hex}"),
    ("\\N", "the \\N escape", "write the character itself, or \\x{hex}"),
    ("\\G", "\\G", "anchor with ^ instead"),
)


def _utf8(text: str) -> bytes:
    """RE2 searches UTF-8; surrogatepass keeps a lone surrogate (a broken emoji) from
    raising: its bytes are invalid UTF-8, which RE2 matches against nothing."""
    return text.encode("utf-8", "surrogatepass")


def _compile_regex(key: str, pattern: str) -> Any:
    """Compile `pattern` with RE2, or raise a ConditionError naming what RE2 lacks."""
    from ..roots import site_packages

    site_packages()  # the hook runs with -S
    import re2  # only rules with `matches` pay for it; never on the hook's fast path

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own message on stderr
    options.never_capture = True  # only "is there a match" is asked
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        detail = str(detail)
    construct, hint = _unsupported(pattern, detail)
    if construct:
        raise ConditionError(
            key,
            f"matches: {construct} is not supported (patterns run on RE2, which matches "
            f"in linear time so that no pattern can stall dispatch); {hint}",
        )
    raise ConditionError(key, f"invalid regular expression: {detail}")


def _unsupported(pattern: str, detail: str) -> tuple[str | None, str]:
    """The construct RE2 refused, when it is one Python's `re` knows, and a rewrite hint."""
    found = detail.rpartition(": ")[2]
    if found.startswith("(?P") and "(?P=" in pattern:
        found = "(?P="
    if detail.startswith("invalid escape sequence") and found[1:2].isdigit():
        return f"backreference {found}", _BACKREF_HINT
    if detail.startswith("bad repetition operator") and found.endswith("+") and len(found) > 1:
        return f"possessive quantifier {found}", "drop the last +: RE2 never backtracks"
    for token, construct, hint in _UNSUPPORTED:
        if found.startswith(token):
            return construct, hint
    return None, ""


def _closest(op: str) -> str | None:
    import difflib

    found = difflib.get_close_matches(op, OPERATORS, n=1, cutoff=0.6)
    return found[0] if found else None


class Condition(Frozen):
    """One `where` key: its path's segments and the test of the values found there."""

    FIELDS = ("key", "segments", "test")
    __slots__ = FIELDS
    key: str
    segments: tuple[str, ...]
    test: Callable[[Any], bool]

    def __init__(self, key: str, segments: tuple[str, ...], test: Callable[[Any], bool]) -> None:
        self._set(key, segments, test)

    def __call__(self, record: Any) -> bool:
        return any(self.test(v) for v in resolve(record, self.segments))


class Where(Frozen):
    """A compiled `where`: conditions combined by `match` (`all` or `any`)."""

    FIELDS = ("conditions", "match")
    __slots__ = FIELDS
    conditions: tuple[Condition, ...]
    match: str

    def __init__(self, conditions: tuple[Condition, ...], match: str = "all") -> None:
        self._set(conditions, match)

    def __call__(self, record: Any) -> bool:
        if not self.conditions:
            return True
        if self.match == "any":
            return any(c(record) for c in self.conditions)
        return all(c(record) for c in self.conditions)


def compile_where(where: dict[str, Any] | None, match: str = "all") -> Where:
    """Compile a `where` mapping; ConditionError names the first bad key."""
    conditions = []
    for key, value in (where or {}).items():
        if not isinstance(key, str) or not key or any(not s for s in key.split(".")):
            raise ConditionError(str(key), "a key is a dotted path like data.tool_name")
        conditions.append(Condition(key, tuple(key.split(".")), _compile_test(key, value)))
    return Where(tuple(conditions), match)


def fnmatchcase(name: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase, imported when a glob is first tested: fnmatch imports `re`,
    which no blocking hook's path imports (regex.py)."""
    if not _glob:
        from fnmatch import fnmatchcase as match

        _glob.append(match)
    return _glob[0](name, pattern)


_glob: list[Callable[[str, str], bool]] = []
