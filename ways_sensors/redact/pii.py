"""Personal data a rule may ask to have masked: `redact: {kinds: [email, phone, iban,
card, ip]}` (docs/masking.md). Off unless a rule names a kind: a record of a rule that
names none is not looked at here, and this module is imported at the first record of a
rule that does.

Each kind is a candidate regex (bounded width, so the scan stays linear) and a
validator that decides, as the secret detectors' value judgement does:

  email  local part, `@`, a host of two or more labels ending in letters (not an
         scp-style remote, `git@host:path`)
  phone  E.164 (`+` and a calling code of pii_tables.CALLING, with that region's
         national number length), or a region's national format (pii_tables.NATIONAL:
         its trunk prefix, grouping and digit count)
  iban   a country of pii_tables.IBAN_LENGTH, that country's length, mod-97 == 1
  card   13 to 19 digits (spaces or dashes between groups), a known issuer's prefix,
         Luhn
  ip     IPv4 (four octets of at most 255, not a version after `v` or `version`) and
         IPv6 (the standard library's parser)

A masked value is `[REDACTED:<kind>:<token>]`, keyed as secrets are (key.py).
"""

from __future__ import annotations

from ..regex import Lazy
from .pii_tables import CALLING, CARD_PREFIXES, IBAN_LENGTH, NATIONAL

KINDS = ("email", "phone", "iban", "card", "ip")

EMAIL = Lazy(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9](?:[A-Za-z0-9._%+\-]{0,62}[A-Za-z0-9_])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9\-]|:[\w~/])"  # `git@github.com:org/repo`: an SSH remote, not an address
)
E164 = Lazy(r"(?<![\w+])\+[1-9](?:[ .\-]?\(?\d{1,4}\)?){2,7}(?!\d|[.\-]\d)")
IBAN = Lazy(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
)
CARD = Lazy(r"(?<![\d\-.])\d{4}(?:[ \-]?\d{2,4}){2,4}(?:[ \-]?\d{1,3})?(?![\d\-]|\.\d)")
IPV4 = Lazy(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
IPV6 = Lazy(
    r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|[0-9A-Fa-f]{1,4})(?:[0-9A-Fa-f:]{0,30})(?![\w:])"
)
_VERSION = Lazy(r"(?:\bv|version|release|ver\.?)\s{0,2}$", 2)  # IGNORECASE


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def luhn(number: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(number)):
        d = ord(c) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card(value: str) -> bool:
    digits = _digits(value)
    if not 13 <= len(digits) <= 19 or not luhn(digits):
        return False
    return any(digits.startswith(p) and len(digits) in lengths for p, lengths in CARD_PREFIXES)


def iban(value: str) -> bool:
    s = value.replace(" ", "")
    if IBAN_LENGTH.get(s[:2]) != len(s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def e164(value: str) -> bool:
    digits = _digits(value)
    if not 8 <= len(digits) <= 15:
        return False
    for size in (1, 2, 3):
        lengths = CALLING.get(digits[:size])
        if lengths is not None:
            return len(digits) - size in lengths
    return False


def ipv4(text: str, start: int, value: str) -> bool:
    if not all(int(o) <= 255 and (o == "0" or o[0] != "0") for o in value.split(".")):
        return False
    return _VERSION.search(text, max(0, start - 12), start) is None


def ipv6(value: str) -> bool:
    if value.count(":") < 2 or not any(c.isdigit() for c in value):
        return False
    import ipaddress  # only when a rule asks for `ip`

    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _add(found: list[tuple[int, int, str]], taken: bytearray, s: int, e: int, k: str) -> None:
    if taken.find(1, s, e) < 0:
        taken[s:e] = b"\x01" * (e - s)
        found.append((s, e, k))


def find(text: str, kinds: frozenset[str], taken: bytearray) -> list[tuple[int, int, str]]:
    """(start, end, kind) of the personal data of `kinds` in text, outside `taken` (the
    secrets' spans, marked 1), which it marks too."""
    found: list[tuple[int, int, str]] = []
    if "email" in kinds and "@" in text:
        for m in EMAIL.finditer(text):
            _add(found, taken, m.start(), m.end(), "email")
    if "iban" in kinds:
        for m in IBAN.finditer(text):
            if iban(m.group()):
                _add(found, taken, m.start(), m.end(), "iban")
    if "card" in kinds:
        for m in CARD.finditer(text):
            if card(m.group()):
                _add(found, taken, m.start(), m.end(), "card")
    if "phone" in kinds:
        if "+" in text:
            for m in E164.finditer(text):
                if e164(m.group()):
                    _add(found, taken, m.start(), m.end(), "phone")
        for regex, lengths in NATIONAL:
            for m in regex.finditer(text):
                if len(_digits(m.group())) in lengths:
                    _add(found, taken, m.start(), m.end(), "phone")
    if "ip" in kinds:
        for m in IPV4.finditer(text):
            if ipv4(text, m.start(), m.group()):
                _add(found, taken, m.start(), m.end(), "ip")
        if ":" in text:
            for m in IPV6.finditer(text):
                if ipv6(m.group()):
                    _add(found, taken, m.start(), m.end(), "ip")
    return found
