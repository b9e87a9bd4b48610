"""`where` conditions: every operator, globs in values and paths, match all|any."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ways_sensors.config.conditions import ConditionError, compile_where, resolve

REC = {
    "agent_type": "main",
    "data": {
        "tool_name": "Bash",
        "input": {"command": "rm -rf /tmp/x", "timeout": 120000, "description": "clean"},
        "tags": ["a", "b"],
        "count": 3,
        "flag": True,
    },
}


def holds(where, match="all", rec=REC):
    return compile_where(where, match)(rec)


def test_scalar_equality_and_globs():
    assert holds({"data.tool_name": "Bash"})
    assert not holds({"data.tool_name": "bash"})  # case-sensitive
    assert holds({"data.tool_name": "B*"})
    assert holds({"data.tool_name": "Ba?h"})
    assert holds({"data.tool_name": "[AB]ash"})
    assert holds({"data.count": 3})
    assert not holds({"data.count": "3"})  # no coercion between types
    assert holds({"data.flag": True})
    assert not holds({"data.count": True})  # True is not 1 here


def test_each_operator():
    assert holds({"data.tool_name": {"equals": "Bash"}})
    assert not holds({"data.tool_name": {"equals": "B*"}})  # equals is literal
    assert holds({"data.tool_name": {"not": "Edit"}})
    assert not holds({"data.tool_name": {"not": "Bash"}})
    assert holds({"data.tool_name": {"in": ["Edit", "Bash"]}})
    assert not holds({"data.tool_name": {"in": ["Edit"]}})
    assert holds({"data.input.command": {"contains": "-rf"}})
    assert holds({"data.tags": {"contains": "b"}})
    assert not holds({"data.tags": {"contains": "c"}})
    assert holds({"data.input.command": {"like": "rm *"}})
    assert holds({"data.input.command": {"matches": r"rm\s+-rf\s+/"}})
    assert not holds({"data.input.command": {"matches": r"^-rf"}})  # searched, anchors honoured
    assert holds({"data.count": {"above": 2}})
    assert not holds({"data.count": {"above": 3}})
    assert holds({"data.count": {"below": 3.5}})
    assert not holds({"data.input.command": {"above": 1}})  # strings are not numbers


def test_matches_searches_with_re2_semantics():
    assert holds({"data.input.command": {"matches": r"(?i)^RM\b"}})
    assert holds({"data.input.command": {"matches": r"/tmp/x\z"}})
    assert holds({"v": {"matches": "^caf.$"}}, rec={"v": "café"})  # . is one character
    assert not holds({"v": {"matches": "x"}}, rec={"v": "\ud83d"})  # a lone surrogate: no error
    assert holds({"v": {"matches": "ok"}}, rec={"v": "\ud83d ok"})


def test_missing_paths_fail_even_for_not():
    assert not holds({"data.nothing": {"not": "x"}})
    assert not holds({"data.nothing": "x"})
    assert not holds({"data.tool_name.deeper": "x"})


def test_glob_in_path_segment_tests_every_field():
    assert holds({"data.input.*": {"matches": "^rm "}})
    assert holds({"data.input.*": {"above": 100000}})
    assert not holds({"data.input.*": "nothing-like-this"})
    assert holds({"data.tags.1": "b"})
    assert holds({"data.tags.*": "a"})


def test_match_all_and_any():
    where = {"data.tool_name": "Edit", "data.count": 3}
    assert not holds(where, "all")
    assert holds(where, "any")
    assert holds({}, "all") and holds({}, "any")


@pytest.mark.parametrize(
    "where, message",
    [
        ({"data.x": {"maches": "a"}}, "did you mean 'matches'"),
        ({"data.x": {"matches": "("}}, "invalid regular expression"),
        ({"data.x": {"matches": "rm (?!-i)"}}, "negative look-ahead (?!...) is not supported"),
        ({"data.x": {"matches": "(?<=sudo )rm"}}, "look-behind (?<=...) is not supported"),
        ({"data.x": {"matches": r"(\w+) \1"}}, "backreference \\1 is not supported"),
        ({"data.x": {"matches": "(?P<a>x)(?P=a)"}}, "named backreference (?P=name)"),
        ({"data.x": {"matches": "a++"}}, "possessive quantifier ++"),
        ({"data.x": {"matches": r"end\Z"}}, "write \\z for the end of the text"),
        ({"data.x": {"above": "ten"}}, "takes a number"),
        ({"data.x": {"in": "abc"}}, "list of scalars"),
        ({"data.x": {"like": 3}}, "glob pattern"),
        ({"data.x": {"equals": "a", "not": "b"}}, "exactly one"),
        ({"data.x": ["a"]}, "scalar or a mapping"),
        ({"data..x": "a"}, "dotted path"),
        ({"data.x": {"not": {"in": [1]}}}, "not takes a scalar"),  # no nesting
    ],
)
def test_compile_errors_are_caught_before_dispatch(where, message):
    with pytest.raises(ConditionError, match=re.escape(message)):
        compile_where(where)


# --- properties -----------------------------------------------------------------------

keys = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=12))
records = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


@given(records, st.lists(keys, min_size=1, max_size=3), scalars)
def test_not_is_the_negation_of_equality_where_the_path_exists(rec, path, value):
    if isinstance(value, str) and any(c in value for c in "*?["):
        return
    key = ".".join(path)
    found = list(resolve(rec, tuple(path)))
    eq = compile_where({key: {"equals": value}})(rec)
    neg = compile_where({key: {"not": value}})(rec)
    if not found:
        assert not eq and not neg
    elif len(found) == 1:
        assert eq != neg


@given(st.text(max_size=20), st.text(alphabet="ab*?", max_size=6))
def test_like_agrees_with_fnmatchcase(value, pattern):
    rec = {"v": value}
    assert compile_where({"v": {"like": pattern}})(rec) == fnmatchcase(value, pattern)


@given(st.dictionaries(keys, scalars, max_size=5), st.dictionaries(keys, scalars, max_size=3))
def test_any_is_or_and_all_is_and(rec, where):
    where = {k: ({"equals": v}) for k, v in where.items()}
    parts = [compile_where({k: v})(rec) for k, v in where.items()]
    assert compile_where(where, "all")(rec) == all(parts)
    assert compile_where(where, "any")(rec) == (any(parts) if parts else True)


@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6))
def test_above_below_are_strict(a, b):
    rec = {"n": a}
    assert compile_where({"n": {"above": b}})(rec) == (a > b)
    assert compile_where({"n": {"below": b}})(rec) == (a < b)
