"""regex.py: masking's patterns compiled from the cache file without `re`, equal to re's."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors.targets import timing

from .conftest import REPO

# a light process (as the blocking hook is) masking text with every kind of secret the
# detectors know about, printing the masked text and which modules it loaded
LIGHT = """
import sys
sys.path[0] = {repo!r}
from ways_sensors import regex, sha
sha.light()
regex.light()
from ways_sensors import redact
text = {text!r}
spans = redact.find(text)
regex.save()
print(repr(spans))
print(" ".join(sorted({{"re", "enum", "functools", "collections"}} & set(sys.modules))))
"""
TEXT = (
    "export API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c password='hunter2!x' "
    "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' "
    "https://user:s3cr3tpass@example.org/x ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
)


def light(env: dict[str, str], text: str = TEXT) -> tuple[str, str]:
    r = subprocess.run(
        [sys.executable, "-S", "-c", LIGHT.format(repo=str(REPO), text=text)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    spans, loaded = [*r.stdout.splitlines(), ""][:2]
    return spans, loaded


def cache_file(cache: str) -> str:
    [name] = os.listdir(os.path.join(cache, "agent-ways", "regex"))
    return os.path.join(cache, "agent-ways", "regex", name)


def test_a_light_process_masks_as_re_does_and_the_next_one_without_re(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    from ways_sensors import redact

    want = repr(redact.find(TEXT))  # this process: re.compile
    first, loaded = light(env)  # no cache yet: re compiles, and the code is kept
    assert (first, loaded) == (want, "collections enum functools re")
    path = cache_file(str(tmp_path / "cache"))
    with open(path, "rb") as f:
        kept = f.read()
    for secret in ("4f9a8b7c6d5e4f3a", "hunter2", "s3cr3tpass", "abcdefghijklmnop", "A1b2C3d4"):
        assert secret.encode() not in kept  # patterns from the source, never the text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    second, loaded = light(env)  # every pattern from the cache: re never imported
    assert (second, loaded) == (want, "")


def test_a_cache_anybody_else_could_write_is_not_read(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    light(env)
    os.chmod(cache_file(str(tmp_path / "cache")), 0o666)
    _, loaded = light(env)
    assert "re" in loaded.split()  # compiled by re again, as with no cache


def test_code_the_engine_refuses_is_compiled_by_re_instead(tmp_path):
    """A damaged entry (the engine validates the code) or a damaged file only costs
    re's compile: the masking is the same."""
    import marshal

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    want, _ = light(env)
    path = cache_file(str(tmp_path / "cache"))
    with open(path, "rb") as f:
        table = marshal.loads(f.read())
    assert table and all(isinstance(k, tuple) and len(v) == 5 for k, v in table.items())
    damaged = {k: (v[0], [1, 2, 3], *v[2:]) for k, v in table.items()}
    with open(path, "wb") as f:
        f.write(marshal.dumps(damaged))
    assert light(env) == (want, "collections enum functools re")
    with open(path, "wb") as f:
        f.write(b"\x00not marshal")
    assert light(env)[0] == want


def test_every_cached_pattern_is_the_pattern_re_compiles(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    light(env)
    code = (
        f"import sys, marshal, _sre, re; sys.path[0] = {str(REPO)!r}\n"
        f"t = marshal.loads(open({cache_file(str(tmp_path / 'cache'))!r}, 'rb').read())\n"
        "print(len(t), all(_sre.compile(s, *e) == re.compile(s, f) for (s, f), e in t.items()))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    n, same = r.stdout.split()
    assert int(n) >= 10 and same == "True", r.stderr


durations = st.text(alphabet=" \t\n0123456789.msx٣٥\u2003-_", max_size=12)


@settings(max_examples=500, deadline=None)
@given(durations)
def test_a_duration_is_read_as_its_pattern_says(text):
    """timing reads durations without `re`: the same texts as DURATION_PATTERN, the
    same number (Unicode digits and spaces too, as re's \\d and \\s)."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$", text)
    assert bool(re.match(timing.DURATION_PATTERN, text)) == bool(m)
    number, unit = timing._duration(text)
    if m is None:
        assert number is None
    else:
        assert (number, unit) == (float(m.group(1)), m.group(2) or "s")


def test_true_is_not_a_duration_after_one_was_read():
    assert timing.parse_duration(1) == 1.0
    with pytest.raises(ValueError, match="duration"):
        timing.parse_duration(True)  # not read as 1 second from the memo
    assert json.dumps(timing.parse_duration("500ms")) == "0.5"


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 18), st.sampled_from("0123456789 -:TtZ.\u0662")),
        max_size=3,
    ),
    st.datetimes(),
)
def test_a_payload_time_is_read_as_strptime_reads_it(damage, when):
    """drafting.utc_seconds is calendar.timegm(time.strptime(...)) without their import
    (re, datetime, locale): the same seconds, the same refusals; a time in other digits
    than ASCII's falls back to the hook's clock."""
    import calendar
    import time

    from ways_sensors.agents.drafting import utc_seconds

    text = list(when.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0"))
    for at, ch in damage:
        text[at] = ch
    t = "".join(text)
    try:
        want: int | None = calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        want = None
    if not t.isascii():
        want = None
    assert utc_seconds(t) == want
