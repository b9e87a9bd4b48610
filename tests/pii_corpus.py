"""A generated, labelled corpus of personal data (issue 40): lines that hold one item of
a kind (a positive: its text and kind) or a look-alike that holds none (a negative).
Deterministic (seeded); the values are made from the formats' rules, never copied.

  email  addresses of several shapes; negatives: scp-style remotes, `@` in code
  phone  E.164 numbers of every calling code in pii_tables.CALLING, and national
         formats of the 22 regions of pii_tables.NATIONAL; negatives: dates, times,
         durations, version numbers, ids, prices
  iban   valid IBANs of 30 countries, spaced and not; negatives: the same with a wrong
         check (mod-97 fails)
  card   valid numbers of every issuer (Luhn); negatives: the same with the last digit
         changed (Luhn fails), order numbers, timestamps in ms
  ip     IPv4 and IPv6; negatives: versions (`v1.2.3.4`, `version 10.0.0.1`), octets over
         255, dotted dates
"""

from __future__ import annotations

import random
import string

SEED = 20261207
LINES = (
    "contact: {v}",
    "2026-12-06T04:11:09Z INFO signup ok for {v} (plan=pro)",
    '{{"customer": {{"id": 4471, "value": "{v}"}}}}',
    "| Jane Doe | {v} | active |",
    "please send it to {v} before friday",
)


def _luhn_digit(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def _group(s: str, sizes: tuple[int, ...], sep: str) -> str:
    out, i = [], 0
    for n in sizes:
        out.append(s[i : i + n])
        i += n
    if i < len(s):
        out.append(s[i:])
    return sep.join(p for p in out if p)


def emails(r: random.Random) -> list[str]:
    first = ["jane", "li", "omar", "ana", "kofi", "marta", "yuki", "sven", "priya", "luis"]
    last = ["doe", "wang", "haddad", "silva", "mensah", "nowak", "sato", "berg", "rao", "ruiz"]
    hosts = ["mail.acme-corp.com", "example.org", "uni-heidelberg.de", "gmail.com", "corp.co.uk"]
    out = []
    for i in range(120):
        f, la = r.choice(first), r.choice(last)
        local = r.choice([f"{f}.{la}", f"{f}{i}", f"{f[0]}{la}", f"{f}+ci{i}", f"{f}_{la}.{i}"])
        out.append(f"{local}@{r.choice(hosts)}")
    return out


def phones(r: random.Random) -> list[str]:
    from ways_sensors.redact.pii_tables import _NATIONAL, CALLING

    out = []
    for code, lengths in sorted(CALLING.items()):
        for _ in range(3):
            n = r.choice(sorted(lengths))
            nsn = str(r.randint(2, 9)) + "".join(r.choice(string.digits) for _ in range(n - 1))
            style = r.randrange(3)
            if style == 0:
                out.append(f"+{code}{nsn}")
            elif style == 1:
                out.append(f"+{code} " + _group(nsn, (3, 3, 4), " "))
            else:
                out.append(f"+{code}-" + _group(nsn, (2, 4, 4), "-"))
    templates = {  # a national format per region: N is a random digit
        "US CA": "(4NN) 5NN-NNNN",
        "GB": "020 7NNN NNNN",
        "FR": "01 NN NN NN NN",
        "DE AT": "030 NNNNNNN",
        "ES": "6NN NNN NNN",
        "IT": "3NN NNN NNNN",
        "NL": "06-NNNNNNNN",
        "JP": "03-NNNN-NNNN",
        "AU": "04NN NNN NNN",
        "IN": "9NNNN NNNNN",
        "BR": "(11) 9NNNN-NNNN",
        "MX": "55 NNNN NNNN",
        "CN": "13N NNNN NNNN",
        "KR": "010-NNNN-NNNN",
        "RU": "8 (9NN) NNN-NN-NN",
        "PL": "5NN NNN NNN",
        "CH": "044 NNN NN NN",
        "SE": "070-NNN NN NN",
        "ZA": "082 NNN NNNN",
        "TR": "0 (5NN) NNN NN NN",
        "IE": "087 NNN NNNN",
        "NG": "080N NNN NNNN",
    }
    assert set(templates) == {regions for regions, _, _ in _NATIONAL}
    for template in templates.values():
        for _ in range(6):
            out.append("".join(r.choice(string.digits) if c == "N" else c for c in template))
    return out


def ibans(r: random.Random, valid: bool) -> list[str]:
    from ways_sensors.redact.pii_tables import IBAN_LENGTH

    out = []
    for country in sorted(IBAN_LENGTH)[:30]:
        for _ in range(3):
            bban = "".join(r.choice(string.digits) for _ in range(IBAN_LENGTH[country] - 4))
            moved = bban + country + "00"
            check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
            if not valid:
                check = (check + r.randint(1, 96)) % 97 or 1
            s = f"{country}{check:02d}{bban}"
            out.append(_group(s, (4,) * 8, " ") if r.random() < 0.5 else s)
    return out


def cards(r: random.Random, valid: bool) -> list[str]:
    issuers = [("4", 16), ("4", 13), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16)]
    issuers += [("34", 15), ("37", 15), ("6011", 16), ("65", 16), ("35", 16), ("36", 14)]
    issuers += [("62", 16), ("62", 19)]
    out = []
    for prefix, n in issuers:
        for _ in range(8):
            body = prefix + "".join(r.choice(string.digits) for _ in range(n - len(prefix) - 1))
            last = _luhn_digit(body)
            if not valid:
                last = str((int(last) + r.randint(1, 9)) % 10)
            num = body + last
            sizes = (4, 6, 5) if n == 15 else (4, 6, 4) if n == 14 else (4, 4, 4, 4)
            out.append(_group(num, sizes, r.choice([" ", "-", ""])))
    return out


def ips(r: random.Random) -> list[str]:
    out = [".".join(str(r.randint(1, 254)) for _ in range(4)) for _ in range(60)]
    for _ in range(40):
        groups = [f"{r.getrandbits(16):x}" for _ in range(8)]
        if r.random() < 0.5:
            i = r.randint(1, 5)
            out.append(":".join(groups[:i]) + "::" + ":".join(groups[i + 2 :]))
        else:
            out.append(":".join(groups))
    return out


def negatives(r: random.Random) -> list[str]:
    out = []
    for i in range(60):
        a, b, c, d = (r.randint(0, 99) for _ in range(4))
        out += [
            f"released in version {a % 12 + 1}.{b % 10}.{c % 20}.{d}",
            f"built v{a}.{b % 10}.{c % 10}.{d} in {r.randint(2, 59)}s",
            f"at 2026-{a % 12 + 1:02d}-{b % 28 + 1:02d} {c % 24:02d}:{d % 60:02d}:{a % 60:02d}",
            f"order {r.randint(10**11, 10**12)} shipped, total ${r.randint(1, 9999)}.{d:02d}",
            f"took {r.randint(100, 99999)} ms, {a} passed, {b % 10} failed",
            f"git clone git@github.com:acme/repo-{i}.git",
            f"ts={r.randint(1_600_000_000_000, 1_800_000_000_000)} seq={r.randint(0, 10**6)}",
            f"sha {r.getrandbits(160):040x}",
            f"decorator @{r.choice(['pytest', 'app', 'dataclass'])}.fixture used {i} times",
            f"netmask 255.255.{r.randint(256, 999)}.0 is not valid",
        ]
    return out


def corpus() -> list[dict[str, str | None]]:
    """{"text", "kind" (None for a negative), "value"} per line."""
    r = random.Random(SEED)
    rows: list[dict[str, str | None]] = []
    for kind, values in (
        ("email", emails(r)),
        ("phone", phones(r)),
        ("iban", ibans(r, True)),
        ("card", cards(r, True)),
        ("ip", ips(r)),
    ):
        rows += [{"text": r.choice(LINES).format(v=v), "kind": kind, "value": v} for v in values]
    for v in ibans(r, False) + cards(r, False) + negatives(r):
        rows.append({"text": r.choice(LINES).format(v=v), "kind": None, "value": v})
    return rows
