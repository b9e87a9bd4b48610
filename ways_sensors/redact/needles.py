"""Families the token-run pass cannot meet, found by a literal needle in one pass.

A token run (scan.Context.runs) is 20 or more [A-Za-z0-9_-]. A base64 body is cut into
short runs by its `+` and `/`, so a prefix such as `ABSK`, `ops_eyJ` or `glc_` may begin
none long enough to be looked at, and the value would be masked from its middle, or not
at all; a URL-shaped credential (a Teams webhook, a Sidekiq gem-server login) and an
Azure AD client secret (`...8Q~...`, whose body holds `~` and `.`) have no long run at
their start either. Each such family has a needle, a literal every value of it holds
(its prefix, or `.atlasv1.`, `Q~`, `webhook.office.com`): the case-folded text is
searched once for all of them (RE2's automaton: its cost does not grow with the number
of needles), and each hit is examined with its family's regex over a bounded window,
from `back` characters before the needle. A light process (a blocking hook: a record or
two) searches with `str.find`, one call per needle, rather than pay RE2's import. A
short string is searched only when it holds a stretch of 16 characters a value could be
made of: most strings of a hook record (commands, paths, ids) have none, and either
search costs more than the rest of the scan on them (bench/RESULTS.md). A base64 value
with a `/` or `+` at least every 16 characters is missed in a string under 2 KB: 4 of
8,400 values drawn from the needle families' shapes.

The spans cover the whole value, base64's `+`, `/` and `=` included.
"""

from __future__ import annotations

from .. import regex as rx
from ..regex import Lazy
from . import families, placeholders
from .scan import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WINDOW = 1400  # the widest match a needle's family allows, after the needle
RE2_FROM = 2048  # a shorter string is searched only when it may hold a value (detect)
STRETCH = 16  # nearly every needle value holds this many of [A-Za-z0-9+=_.~-] in a row
_STRETCH = b"a" * STRETCH
_STRETCH_TABLE = bytes(
    ord("a") if (chr(i).isascii() and (chr(i).isalnum() or chr(i) in "+=_.~-")) else ord(" ")
    for i in range(256)
)


class Needle:
    """A family found by a literal: its kind, the needle (lower case), how far before
    the needle its match starts (or, with `opening`, at most how far: the match starts
    at the last `opening` there, a URL's scheme; `*`: anywhere there, searched), its
    regex (group 1, when there is one, is the secret), and how far past the needle a
    match may reach."""

    __slots__ = ("ahead", "back", "kind", "needle", "opening", "regex")

    def __init__(
        self,
        kind: str,
        needle: str,
        back: int,
        source: str,
        opening: str = "",
        ahead: int = WINDOW,
    ) -> None:
        self.kind, self.needle, self.back, self.opening = kind, needle, back, opening
        self.regex, self.ahead = Lazy(source), ahead


_HAND = (  # the documented shapes that have no literal prefix to dispatch on, and
    # the cookie, whose name stays readable
    Needle("gitlab-session-cookie", "_gitlab_session=", 0, r"_gitlab_session=([0-9a-z]{32})\b"),
    Needle(
        "azure-ad-client-secret",
        "q~",
        4,
        r"(?<![A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?![A-Za-z0-9_~.\-])",
    ),
    Needle(
        "hashicorp-tf-api-token",
        ".atlasv1.",
        14,
        r"(?<![A-Za-z0-9])([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70})(?![A-Za-z0-9_=\-])",
    ),
    Needle(
        "maxmind-license-key",
        "_mmk",
        36,
        r"(?<![A-Za-z0-9_])([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9_])",
    ),
    Needle(
        "microsoft-teams-webhook",
        ".webhook.office.com/",
        72,
        r"https://[a-z0-9\-]{1,63}\.webhook\.office\.com/webhookb2/[a-z0-9\-]{36}@[a-z0-9\-]{36}"
        r"/IncomingWebhook/[a-z0-9]{32}/[a-z0-9\-]{36}(?:/[A-Za-z0-9_\-]{1,80})?",
        opening="https://",
    ),
    Needle(
        "sidekiq-sensitive-url",
        "contribsys.com",
        40,
        r"(?i:https?://([a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com)",
        opening="http",
    ),
    *(
        Needle(  # `<id>.<4-6>.acc_<...>.<base64>`: lower-case dotted runs, shorter than 20
            "authress-service-client-access-key",
            needle,
            52,
            r"(?<![A-Za-z0-9])((?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-]"
            r"[a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120})(?![a-z0-9+/_=-])",
            opening="*",
            ahead=160,  # searched: its window as narrow as its tail (a text of `.acc_`)
        )
        for needle in (".acc_", ".acc-")
    ),
    Needle(  # the constant is base64 of the service's host; the rest is the token
        "aws-amazon-bedrock-api-key-short-lived",
        "bedrock-api-key-ymvkcm9jay5hbwf6b25hd3muy29t",
        0,
        r"(bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&._\-]{20,2000})",
    ),
    Needle(  # Bundler's setting for the same gem server
        "sidekiq-secret",
        "__contribsys__com",
        24,
        r"BUNDLE_(?:GEMS|ENTERPRISE)__CONTRIBSYS__COM[\"']?\s{0,4}[=:]\s{0,4}[\"']?"
        r"([a-f0-9]{8}:[a-f0-9]{8})(?![A-Za-z0-9])",
        opening="BUNDLE_",
    ),
    Needle(  # shapes.py's, shorter than a token run (its secret's adjacency needs a run)
        "alibaba-access-key-id", "ltai", 0, r"(LTAI[A-Za-z0-9]{12,15})(?![A-Za-z0-9_\-])"
    ),
    Needle(  # shapes.py's: base64 of {"auths":, whose + and / cut runs short
        "docker-config",
        "eyjhdxrocyi6",
        0,
        r"(eyJhdXRocyI6[A-Za-z0-9+/]{16,20000}={0,2})",  # as shapes.py's: no lookahead
        ahead=20100,
    ),
    Needle(  # shapes.py's, whose `=` cuts a run short
        "atlassian-api-token", "atatt3", 0, r"(ATATT3[A-Za-z0-9_\-=]{150,250})(?![A-Za-z0-9_\-=])"
    ),
    *(
        Needle(
            "flyio-access-token",
            prefix,
            0,
            rf"({prefix}[A-Za-z0-9+/]{{100,1124}}={{0,3}})(?![A-Za-z0-9_\-+/=])",
        )
        for prefix in ("fm1a_", "fm1r_", "fm2_")
    ),
)
NEEDLES: tuple[Needle, ...] = _HAND + tuple(
    Needle(kind, needle, 0, source) for kind, _, needle, source in families.TABLE if needle
)
BY_NEEDLE: dict[str, list[Needle]] = {}
for _n in NEEDLES:
    BY_NEEDLE.setdefault(_n.needle, []).append(_n)
_ANY: list[Any] = []  # RE2's automaton over every needle, made on first use


def _automaton() -> Any:
    if not _ANY:
        import re2  # the dispatcher's: a light process never gets here

        alternation = "|".join(sorted((_escape(k) for k in BY_NEEDLE), key=len, reverse=True))
        _ANY.append(re2.compile(alternation))
    return _ANY[0]


def _escape(literal: str) -> str:
    return "".join("\\" + c if not c.isalnum() and c != "_" else c for c in literal)


def _hits(ctx: Context) -> list[tuple[int, str]]:
    """(position, needle) of every needle in the folded text, in order."""
    hay = ctx.folded
    ctx.searched(ctx.n)
    if not rx.is_light():
        return [(m.start(), m.group()) for m in _automaton().finditer(hay)]
    out: list[tuple[int, str]] = []
    for needle in BY_NEEDLE:
        i = hay.find(needle)
        while i >= 0:
            out.append((i, needle))
            i = hay.find(needle, i + 1)
    out.sort()
    return out


def _start(text: str, family: Needle, at: int) -> int:
    """Where a match of `family` around the needle at `at` would start, or -1."""
    if family.opening == "*":  # anywhere in the `back` characters before: searched
        return max(0, at - family.back)
    if family.opening:  # a URL: its scheme, at most `back` characters before the needle
        return text.rfind(family.opening, max(0, at - family.back), at)
    start = at - family.back
    if start < 0 or (start > 0 and text[start - 1].isalnum() and family.back == 0):
        return -1  # `xABSK...`: the needle inside a longer word
    return start


def detect(ctx: Context) -> None:
    """Each needle's families matched once, at the one place a value holding the needle
    would start: a bounded match per hit, whatever the text repeats."""
    text = ctx.text
    if ctx.n < RE2_FROM:  # no STRETCH run: no value here (most strings of a record)
        raw = text.encode() if text.isascii() else text.encode("ascii", "replace")
        if raw.translate(_STRETCH_TABLE).find(_STRETCH) < 0:
            return
    for at, needle in _hits(ctx):
        if ctx.covered(at, at + len(needle)):
            continue
        ctx.tick()  # every hit is looked at, if only to skip it
        for family in BY_NEEDLE[needle]:
            start = _start(text, family, at)
            if start < 0:
                continue
            end = min(ctx.n, at + family.ahead)
            if ctx.work is not None:
                ctx.work.around += at + len(needle) - start  # read before the match
            if family.opening == "*":
                m = family.regex.search(text, start, end)
                m = m if m is not None and m.start() <= at else None
            else:
                m = family.regex.match(text, start, end)
            if m is None:
                continue
            group = 1 if m.re.groups else 0
            if placeholders.real(m.group(group)) and ctx.add(
                m.start(group), m.end(group), family.kind
            ):
                break
