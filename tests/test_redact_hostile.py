"""Masking stays linear on hostile text: no regex can backtrack without bound, and doubling
a hostile input at most doubles the scan's work (counted, not timed: bench/ times it)."""

from __future__ import annotations

import json
import random
import re

import pytest

from ways_sensors import redact, regex
from ways_sensors.redact import (
    keyvalue,
    needles,
    pii,
    pii_tables,
    placeholders,
    scan,
    shapes,
    structure,
    values,
)

try:  # Python 3.11+
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

WIDTH_LIMIT = 32768  # the widest match any detector needs (a PEM block, a docker config)


@pytest.fixture(autouse=True)
def own_state_root(tmp_path, monkeypatch):
    """Tokens need the install key: each test makes its own, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def scan_regexes() -> list[re.Pattern[str]]:
    """Every regex the scan runs: module-level patterns, shapes, pairs, the name regexes."""
    out = [
        v
        for mod in (shapes, structure, keyvalue, values, scan, placeholders, pii)
        for v in vars(mod).values()
        if isinstance(v, (re.Pattern, regex.Lazy))
    ]
    out = [v.regex if isinstance(v, regex.Lazy) else v for v in out]
    out += [s.regex for s in shapes.SHAPES]
    out += [s.pair.regex for s in shapes.SHAPES if s.pair is not None]
    out += [n.regex.regex for n in needles.NEEDLES]
    out += [rx.regex for rx, _ in pii_tables.NATIONAL]
    out += [keyvalue.regex(w) for w in keyvalue.WORDS]
    out += [c.regex for c in values._CLASSES]
    out += [rx.regex for rx in keyvalue._GLUED_RX.values()]
    return out


def literal_prefix(rx: re.Pattern[str]) -> str:
    """The literal characters every match of `rx` starts with."""
    out = []
    items = list(sre_parse.parse(rx.pattern, rx.flags))
    while items:
        op, av = items.pop(0)
        if op == sre_parse.LITERAL:
            out.append(chr(av))
        elif op == sre_parse.SUBPATTERN:
            items = list(av[-1]) + items
        else:
            break
    return "".join(out)


@pytest.mark.parametrize("rx", scan_regexes(), ids=lambda r: r.pattern[:40])
def test_every_regex_has_a_bounded_width(rx):
    """No unbounded repeat: a match attempt costs at most a constant, so a scan is linear."""
    _, high = sre_parse.parse(rx.pattern, rx.flags).getwidth()
    assert high <= WIDTH_LIMIT, f"{rx.pattern!r} can match {high} characters"


def hostile_needles() -> list[str]:
    """What a hostile text repeats: every regex's literal prefix, every name word and
    program, and the issue's three (`sk-`, `eyJ`, `mysql `)."""
    needles = {literal_prefix(rx) for rx in scan_regexes()} - {""}
    needles |= {k for s in shapes.SHAPES for k in s.starts}
    needles |= {n.needle for n in globals()["needles"].NEEDLES} | {"00a!", "arn:aws:"}
    needles |= set(keyvalue.WORDS) | {p + " " for p in structure.PROGRAMS}
    needles |= {"sk-", "eyJ", "mysql ", "mysql -p", "curl -u a:", "password is 1", "://:", "a:b@"}
    needles |= {"-----BEGIN PRIVATE KEY-----", "AKIA" + "A" * 16 + " ", "123456789:AA", "?key="}
    needles |= {"name: X_TOKEN\nvalue: ", "<password>", "--token ", "os.getenv(", "${", "\\\n"}
    needles |= {"[REDACTED:secret-field:0123abcd]", "password:[REDACTED:x:0123abcd]"}
    return sorted(needles)


def work(text: str) -> int:
    with scan.measure() as w:
        redact.find(text)
    return w.total


def repeated(needle: str, size: int) -> str:
    return (needle * (size // len(needle) + 1))[:size]


@pytest.mark.parametrize("needle", ["sk-", "eyJ", "mysql "])
def test_the_issues_hostile_inputs_are_linear(needle, tmp_path, monkeypatch):
    """150 KB and 300 KB of `sk-`, `eyJ`, `mysql ` repeated (13 s and 56 s before)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    small, large = repeated(needle, 150_000), repeated(needle, 300_000)
    w_small, w_large = work(small), work(large)
    assert w_small >= 150_000  # the counter sees the scan
    assert w_large <= 2.5 * w_small, (w_small, w_large)
    redact.mask_text(large)  # and it finishes


@pytest.mark.parametrize("needle", hostile_needles(), ids=repr)
def test_every_needle_repeated_is_linear(needle, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    text = repeated(needle, 20_000)
    w1, w2 = work(text), work(text + text)
    assert w2 <= 2.5 * w1, (w1, w2)


@pytest.mark.parametrize("needle", ["ghp_", "eyJ", "sk-", "AKIA", "glsa_", "MTk4", "key=", "-p"])
def test_needles_with_random_bodies_are_linear(needle, tmp_path, monkeypatch):
    """Candidates that get far into a match before failing: a needle, a random body of
    several lengths, a separator, repeated."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    rnd = random.Random(needle)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
    pieces, size = [], 0
    while size < 30_000:
        body = "".join(rnd.choice(alphabet) for _ in range(rnd.choice([5, 40, 300])))
        piece = needle + body + rnd.choice(" .:=/\n")
        pieces.append(piece)
        size += len(piece)
    text = "".join(pieces)
    w1, w2 = work(text), work(text + text)
    assert w2 <= 2.5 * w1, (w1, w2)


def test_the_counter_would_see_a_rescan():
    """The measure is not blind: a detector that searched the whole text again for every
    candidate would show up (this one does it on purpose, once per `x`)."""
    text = repeated("x ", 4000)

    def rescanning(ctx: scan.Context) -> None:
        for m in ctx.finditer(re.compile("x"), False):
            ctx.searched(ctx.n - m.start())

    engine = scan.Scan([rescanning])
    with scan.measure() as small:
        engine.find(text)
    with scan.measure() as large:
        engine.find(text + text)
    assert large.total > 3.5 * small.total


def test_masking_stays_inside_the_rules_deadline_through_the_dispatcher(install, tmp_path):
    """A prompt too big to mask within a rule's 20 ms is dropped by that rule (counted
    `lost`, logged as MaskTimeout), never sent unmasked; an unmasked rule still gets it,
    and the masked rule's next, small record is delivered."""
    from .conftest import payload
    from .helpers import counters_of, wait_until

    def lines(path):  # whole lines only: an 8 MB append may be read half-written
        data = path.read_bytes() if path.exists() else b""
        return [json.loads(x) for x in data.split(b"\n")[:-1]]

    masked, raw = tmp_path / "masked.jsonl", tmp_path / "raw.jsonl"
    install.sensor(
        "m",
        f"""\
        rules:
          tight:
            sections: [user_prompt]
            timeout: 20ms
            dispatch: {{file: {{path: '{masked}'}}}}
          open:
            sections: [user_prompt]
            redact: none
            dispatch: {{file: {{path: '{raw}'}}}}
        """,
    )
    big = "sk-" + "word and more words, key=value; " * 250_000  # about 8 MB of prose
    for text in (big, "small prompt"):
        r = install.hook({**payload("UserPromptSubmit"), "prompt": text})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(lines(raw)) == 2, timeout=60)
    assert wait_until(lambda: len(lines(masked)) == 1, timeout=60)
    assert lines(masked)[0]["data"]["prompt"] == "small prompt"
    assert wait_until(lambda: counters_of(install, "m/tight").get("lost", 0) == 1)
    log = (install.state_root / "events.log").read_text()
    assert "MaskTimeout" in log and "word and more" not in log
