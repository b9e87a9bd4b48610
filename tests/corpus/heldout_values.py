"""The values the held-out corpus invents: passwords as people choose them, users, hosts,
and token shapes from the public scanners' rule documentation. One seeded generator,
shared by heldout.py and heldout_clean.py (in that order), so the corpus is reproducible.
"""

from __future__ import annotations

import base64
import random
import string

R = random.Random(20261130)
A = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = A + "+/"
URLSAFE = A + "-_"
D = string.digits


def rs(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def pw() -> str:
    """A password as people choose them: words with digits and symbols, or random."""
    word = R.choice(["Falcon", "river", "Orbit", "maple", "Quartz", "tundra", "Velvet", "ember"])
    return R.choice(
        [
            f"{word}{R.randint(10, 9999)}{R.choice('!#%*+')}",
            rs(A, R.randint(10, 18)),
            rs(A + "!#%^*()-_", 14),
            f"{word.lower()}-{rs(D, 3)}-{rs(string.ascii_lowercase, 4)}",
        ]
    )


def user() -> str:
    return R.choice(["admin", "deploy", "ci-bot", "svc_app", "jenkins", "root", "j.smith"])


def host() -> str:
    return R.choice(["db.internal", "10.0.3.17", "cache-01", "mq.prod.acme.io", "smtp.acme.dev"])


def b64(raw: str) -> str:
    return base64.b64encode(raw.encode()).decode()


def discord_bot() -> str:
    snowflake = str(R.randint(10**17, 10**19 - 1))
    first = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return f"{first}.{rs(URLSAFE, 6)}.{rs(URLSAFE, R.choice([27, 38]))}"


def telegram() -> str:
    return f"{rs(D, R.choice([9, 10]))}:AA{rs(URLSAFE, 33)}"


def aws_id() -> str:
    return R.choice(["AKIA", "ASIA"]) + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def aws_secret() -> str:
    while True:
        s = rs(B64, 40)
        if any(c.isupper() for c in s) and any(c.islower() for c in s):
            return s
