"""Values shaped like a secret that hold none: placeholders and references to a secret.

A catalogue shape (families.py) matches by prefix and alphabet, so `ghp_` followed by
36 `X`, or `glpat-` and twenty `x`, fits it: documentation and templates are full of
them. A body made of a character or two repeated is a placeholder, whatever its prefix.
An AWS Secrets Manager ARN (`arn:aws:secretsmanager:<region>:<account>:secret:<name>`)
names a secret and holds none: the `secret:` segment is not a key and value.
"""

from __future__ import annotations

from ..regex import Lazy
from . import values

# the ARN of a secret: its name ends in `-` and the six characters AWS appends
SECRET_ARN = Lazy(
    r"arn:aws[a-z\-]{0,16}:secretsmanager:[a-z0-9\-]{1,32}:\d{12}:secret:[A-Za-z0-9/_+=.@\-]{1,512}"
)


def repeated(value: str) -> bool:
    """A body of at most two distinct characters (`XXXX...`, `x0x0...`, `****`)."""
    tail = value[-16:]
    return len(set(tail.lower())) <= 2


def real(value: str) -> bool:
    """A catalogue shape's match that may be a live credential."""
    return values.not_example(value) and not repeated(value)


def in_secret_arn(text: str, start: int) -> bool:
    """Whether text[start] lies in a Secrets Manager ARN (looked up at most 120
    characters back: the ARN's fixed part is shorter)."""
    lo = max(0, start - 120)
    i = text.rfind("arn:aws", lo, start + 1)
    if i < 0:
        return False
    m = SECRET_ARN.match(text, i, min(len(text), i + 700))
    return m is not None and m.start() <= start < m.end()
