"""The sensor-file loader parses with libyaml where PyYAML has it and in Python where it
has not (config/yamlread.py): both give the same data, and refuse the same hostile
files at the same line with the same reason."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors.config import yamlread
from ways_sensors.config.yamlread import YamlError, parse

from .jsonvalues import values

HOSTILE = {
    "alias": b"a: &a [x]\nb: *a\n",
    "merge": b"d: &d {x: 1}\nr:\n  <<: *d\n",
    "deep-flow": b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "deep-block": b"a:\n" + b"".join(b"  " * i + b"b:\n" for i in range(1, 80)),
    "duplicate": b"rules:\n  r: {}\n  r: {}\n",
    "bad-date": b"spec: 1\nwhen: 2001-13-45\n",
    "huge-int": b"spec: 1\nn: " + b"7" * 5000 + b"\n",
    "two-documents": b"a: 1\n---\nb: 2\n",
    "unclosed": b"a: [1, 2\nb: 3\n",
    "tab-indent": b"a:\n\tb: 1\n",
    "python-tag": b"a: !!python/object/apply:os.system [true]\n",
}


def outcome(text: bytes, parser: type) -> tuple:
    try:
        data, _ = parse(text, parser)
    except YamlError as exc:
        return ("refused", exc.line, exc.message.split(":")[0])
    return ("read", yaml.safe_dump(data, sort_keys=True))


def test_the_loader_in_use_parses_in_c():
    assert yamlread._BoundedLoader is yamlread._CLoader
    assert not issubclass(yamlread._CLoader, yaml.scanner.Scanner)  # no scanning in Python


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_both_parsers_refuse_a_hostile_file_alike(name):
    ours = outcome(HOSTILE[name], yamlread._CLoader)
    assert ours[0] == "refused"
    assert ours == outcome(HOSTILE[name], yamlread._PyLoader)


def test_a_refusal_names_its_line_under_libyaml():
    with pytest.raises(YamlError) as got:
        parse(b"spec: 1\nrules:\n  r: {}\n  r: {}\n", yamlread._CLoader)
    assert got.value.line == 4 and "duplicate key 'r'" in got.value.message
    data, node = parse(b"spec: 1\nrules:\n  r:\n    sections: [x]\n", yamlread._CLoader)
    assert data == {"spec": 1, "rules": {"r": {"sections": ["x"]}}}
    assert yamlread.position(node, ["rules", "r", "sections"]) == (4, 5)


styles = st.sampled_from([None, False, True])  # block, flow mixed, flow


@settings(max_examples=300, deadline=None)
@given(values, styles)
def test_both_parsers_read_any_dumped_document_alike(value, style):
    if isinstance(value, float) and math.isnan(value):
        value = [value]
    text = yaml.safe_dump({"v": value}, default_flow_style=style, allow_unicode=True).encode()
    c, py = parse(text, yamlread._CLoader), parse(text, yamlread._PyLoader)
    assert repr(c[0]) == repr(py[0])  # NaN as NaN
    assert c[1].start_mark.line == py[1].start_mark.line
