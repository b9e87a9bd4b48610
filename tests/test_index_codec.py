"""The rule index's file format in process (indexbuild.render, index.parse): what is
rendered parses back whole, and anything torn or grown parses to nothing (the hook then
rebuilds). The real hook reading it: test_hook.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ways_sensors import index
from ways_sensors.config.indexbuild import render
from ways_sensors.config.spec import SECTIONS

SECTION_SETS = st.frozensets(st.sampled_from(SECTIONS))
# key lines name paths: any text, a path's undecodable bytes as surrogateescape's
PATH_TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8"), st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)
    ),
    max_size=30,
)
KEY = st.lists(PATH_TEXT.map(lambda s: s.replace("\n", "\\n")), min_size=1, max_size=5).map(
    "\n".join
)
RULES = st.text(st.characters(codec="utf-8"), max_size=200)


@given(SECTION_SETS, SECTION_SETS, KEY, RULES)
def test_render_then_parse_round_trips(asyn, block, key, rules):
    got = index.parse(render(asyn, block, key, rules))
    assert got is not None
    assert (got.async_sections, got.blocking_sections, got.key, got.rules_text) == (
        asyn,
        block,
        key,
        rules,
    )


@given(SECTION_SETS, SECTION_SETS, KEY, RULES, st.data())
def test_a_torn_or_grown_index_parses_to_nothing(asyn, block, key, rules, data):
    text = render(asyn, block, key, rules)
    cut = data.draw(st.integers(0, len(text) - 1))
    assert index.parse(text[:cut]) is None  # a writer killed mid-write
    assert index.parse(text + data.draw(st.text(min_size=1, max_size=5))) is None


def test_a_part_missing_is_refused():
    text = render({"tool_call"}, set(), "v 1", "{}")
    for part in ("async ", "blocking ", "key ", "rules\n"):
        broken = text.replace(part, part.upper(), 1)
        assert index.parse(broken) is None
