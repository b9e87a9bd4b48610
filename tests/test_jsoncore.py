"""jsoncore is json, byte for byte, without importing json (jsoncore.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors import jsoncore

from .conftest import REPO
from .jsonvalues import same_outcome, values


@settings(max_examples=300, deadline=None)
@given(values, st.booleans(), st.booleans(), st.booleans(), st.sampled_from([None, (",", ":")]))
def test_dumps_is_json_dumps(value, ensure_ascii, sort_keys, allow_nan, separators):
    kw = dict(
        ensure_ascii=ensure_ascii, sort_keys=sort_keys, allow_nan=allow_nan, separators=separators
    )
    same_outcome(lambda: jsoncore.dumps(value, **kw), lambda: json.dumps(value, **kw))


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["", " ", "\n\t ", "x", " 1", "]"]), st.sampled_from(["", "  "]))
def test_loads_is_json_loads_on_documents_and_their_damage(value, tail, head):
    doc = head + json.dumps(value) + tail
    same_outcome(lambda: jsoncore.loads(doc), lambda: json.loads(doc))
    raw = doc.encode("utf-8", "surrogatepass")
    same_outcome(lambda: jsoncore.loads(raw), lambda: json.loads(raw))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE-+ \ntruefalsn\\u\ufeffINa', max_size=30))
def test_loads_fails_as_json_does_on_arbitrary_text(text):
    same_outcome(lambda: jsoncore.loads(text), lambda: json.loads(text))


@pytest.mark.parametrize(
    "raw", [b"\xef\xbb\xbf[1]", "[1]".encode("utf-16"), "[1]".encode("utf-32-le"), b"\xff", b"2"]
)
def test_loads_reads_bytes_as_json_does(raw):
    same_outcome(lambda: jsoncore.loads(raw), lambda: json.loads(raw))


def test_decoder_options_are_json_decoders():
    kw = dict(object_pairs_hook=lambda p: p, parse_constant=lambda _: None, parse_float=str)
    doc = '{"a": 1.5, "a": NaN, "b": [Infinity, {"c": 2}]}'
    assert jsoncore.Decoder(**kw).decode(doc) == json.JSONDecoder(**kw).decode(doc)
    assert jsoncore.Decoder().raw_decode("[1] tail", 0) == json.JSONDecoder().raw_decode("[1] tail")
    assert math.isnan(jsoncore.loads("NaN"))


def test_an_encoder_is_reusable_after_a_failed_call():
    """The C encoder's record of open containers is per call: a default that raised
    inside a dict does not make the next call see a circular reference."""
    enc = jsoncore.Encoder(sort_keys=True)
    with pytest.raises(TypeError):
        enc.encode({"a": {"b": object()}})
    assert enc.encode({"a": {"b": 1}}) == '{"a": {"b": 1}}'
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        enc.encode(loop)


def test_importing_it_loads_neither_json_nor_re():
    code = (
        f"import sys; sys.path[0] = {str(REPO)!r}; import ways_sensors.jsoncore as j; "
        "j.dumps(j.loads('{\"a\": [1, 2.5, null]}')); "
        "print(sorted({'json', 're', 'enum'} & set(sys.modules)))"
    )
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert (r.returncode, r.stdout.strip()) == (0, "[]"), r.stderr
