"""Values made from a regex: a random string each match of the family's shape could be.

The family tests (tests/test_redact_families.py) and the held-out corpus (bench/
families_bench.py) draw their secrets from the catalogue shapes this way, never from
the catalogues' own example strings, so a value is new to the scan. Deterministic for
a given random.Random.
"""

from __future__ import annotations

import random
import re
import string

try:
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

PRINTABLE = string.ascii_letters + string.digits + "_-+/=.~"
CATEGORIES = {
    sre_parse.CATEGORY_DIGIT: string.digits,
    sre_parse.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre_parse.CATEGORY_SPACE: " ",
}
MAX_EXTRA = 24  # a repeat {n,m} draws at most n + MAX_EXTRA


def _class(items: list, fold: bool) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op == sre_parse.NEGATE:
            negate = True
        elif op == sre_parse.LITERAL:
            chars.append(chr(av))
        elif op == sre_parse.RANGE:
            chars += [chr(c) for c in range(av[0], av[1] + 1)]
        elif op == sre_parse.CATEGORY:
            chars += list(CATEGORIES.get(av, ""))
    if fold:
        chars += [c.swapcase() for c in chars]
    if negate:
        return "".join(c for c in PRINTABLE if c not in chars)
    return "".join(sorted(set(chars)))


def _emit(items, r: random.Random, fold: bool, out: list[str]) -> None:
    for op, av in items:
        if op == sre_parse.LITERAL:
            out.append(chr(av))
        elif op == sre_parse.IN:
            out.append(r.choice(_class(av, fold)))
        elif op == sre_parse.ANY:
            out.append(r.choice(string.ascii_letters))
        elif op == sre_parse.BRANCH:
            _emit(r.choice(av[1]), r, fold, out)
        elif op == sre_parse.SUBPATTERN:
            add = av[1]
            _emit(av[-1], r, fold or bool(add & re.IGNORECASE), out)
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            lo, hi, inner = av
            hi = min(hi, lo + MAX_EXTRA)
            for _ in range(r.randint(lo, hi) if op == sre_parse.MAX_REPEAT else lo):
                _emit(inner, r, fold, out)
        # AT, ASSERT, ASSERT_NOT: nothing to emit


def sample(regex: str, r: random.Random) -> str:
    """A string `regex` matches from its start, its secret group (1, when there is one)
    a random draw of the shape's alphabet."""
    compiled = re.compile(regex)
    for _ in range(50):
        out: list[str] = []
        _emit(sre_parse.parse(regex), r, False, out)
        value = "".join(out)
        m = compiled.match(value)
        if m and m.end() == len(value) and len(set(value[-16:].lower())) > 4:
            return value
    raise ValueError(f"no sample for {regex!r}")


def secret_of(regex: str, value: str) -> str:
    """The part of `value` that is the secret (the regex's group 1, or all of it)."""
    m = re.compile(regex).match(value)
    assert m is not None
    return m.group(1) if m.re.groups and m.group(1) else m.group(0)
