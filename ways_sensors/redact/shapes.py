"""Secrets known by their shape: provider tokens, JWTs, chat-bot tokens, key pairs, PEM keys.

Every provider token is a run of 20 or more [A-Za-z0-9_-] (its prefix's dots and
colons aside), so the text is searched once for such runs (scan.Context.runs), and
only a run that is not plainly a hash, a number or a word is examined: its first two
characters (or those of the dotted token it ends, `SG.`, `hvs.`, a JWT's header) pick
the few shapes that can start there, each matched once at that position. What no
provider shape claims is tried against the structures that need no vendor name:

* a prefixed token: a short lower-case vendor prefix (`glsa_`, `pul-`, `sk-or-v1-`,
  `tskey-auth-`) or upper-case one (`NRAK-`) and a long random body;
* a Discord bot token: a base64 snowflake, a 6-character timestamp and an HMAC, joined
  by dots (the first part must decode to the 17 to 20 digits of a user id);
* a Telegram bot token: a bot id, a colon and `AA...`;
* a key id whose secret follows it (AWS `AKIA...` then 40 base64 characters, Alibaba
  `LTAI...`, Tencent `AKID...`, Google HMAC `GOOG1...`, Twilio `AC...` then its auth
  token): the secret has no prefix of its own, its neighbour names the vendor.

PEM private-key blocks are found by their `-----BEGIN` line; each block's end is looked
up among the `-----END` lines found in one pass, so many headers never rescan a body.
"""

from __future__ import annotations

import bisect

from .. import regex as rx
from ..regex import Lazy
from . import families, placeholders, values
from .scan import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

_W = r"(?![A-Za-z0-9])"  # trailing boundary


class _Lazy:
    """A regex compiled when first matched: most texts reach few shapes, and compiling
    all of them at import would cost every blocking rule's hook for shapes it never
    reaches (bench/RESULTS.md, Blocking path cost).
    Two threads compiling it at once both get the same pattern; one is kept."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = rx.compile(self._source)
        return compiled


class Pair(_Lazy):
    """The secret that follows a key id: its shape and how far after the id it may be."""

    __slots__ = ("check", "distance", "kind")

    def __init__(
        self, kind: str, regex: str, check: Callable[[str], bool], distance: int = 160
    ) -> None:
        super().__init__(regex)
        self.kind, self.check, self.distance = kind, check, distance


class Shape(_Lazy):
    """A provider's token: the two characters it starts with, the regex matched at the
    candidate (group 1 is the secret), the check of its value, the secret that follows
    it (`pair`), and whether the match itself is masked (not a Twilio account SID)."""

    __slots__ = ("check", "kind", "mask", "pair", "starts")

    def __init__(
        self,
        kind: str,
        starts: tuple[str, ...],
        regex: str,
        check: Callable[[str], bool],
        pair: Pair | None,
        mask: bool,
    ) -> None:
        super().__init__(regex)
        self.kind, self.starts, self.check = kind, starts, check
        self.pair, self.mask = pair, mask


def _mixed_base64(v: str) -> bool:
    return (
        values.not_example(v)
        and any(c.isupper() for c in v)
        and any(c.islower() for c in v)
        and any(c.isdigit() for c in v)
    )


def _pair(kind: str, body: str, check: Callable[[str], bool] = _mixed_base64) -> Pair:
    return Pair(kind, rf"(?<![A-Za-z0-9/+])({body})(?![A-Za-z0-9/+=])", check)


def _shape(
    kind: str,
    starts: str,
    regex: str,
    check: Callable[[str], bool] = placeholders.real,
    pair: Pair | None = None,
    mask: bool = True,
) -> Shape:
    return Shape(kind, tuple(starts.split()), regex, check, pair, mask)


_AWS_PAIR = _pair("aws-secret-access-key", r"[A-Za-z0-9/+]{40}")
SHAPES: tuple[Shape, ...] = (
    _shape("age-secret-key", "AG", r"(AGE-SECRET-KEY-1[0-9A-Z]{58})" + _W),
    _shape(
        "aws-access-key-id",
        "AK AS AB AC AR AI AG AN AP A3",
        r"(A(?:KIA|SIA|BIA|CCA|ROA|IDA|GPA|NPA|NVA|PKA|3T[A-Z0-9])[A-Z2-7]{16})(?![A-Z0-9])",
        pair=_AWS_PAIR,
    ),
    _shape("github-token", "gh", r"(gh[pousr]_[A-Za-z0-9]{36,255})" + _W),
    _shape("github-fine-grained-token", "gi", r"(github_pat_[A-Za-z0-9_]{60,255})" + _W),
    _shape(
        "gitlab-token",
        "gl GR",
        r"(gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|oas)-[A-Za-z0-9_\-]{20,100}"
        r"|GR1348941[A-Za-z0-9_\-]{20,100})",
    ),
    _shape("anthropic-api-key", "sk", r"(sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{32,200})"),
    _shape(
        "openai-api-key",
        "sk",
        r"(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,200}T3BlbkFJ[A-Za-z0-9_\-]{16,200}"
        r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,250})",
    ),
    _shape(
        "stripe-key",
        "sk rk wh",
        r"([sr]k_(?:live|test)_[A-Za-z0-9]{20,250}|whsec_[A-Za-z0-9]{32,100})",
    ),
    _shape("groq-api-key", "gs", r"(gsk_[A-Za-z0-9]{48,56})" + _W),
    _shape("xai-api-key", "xa", r"(xai-[A-Za-z0-9]{70,90})" + _W),
    _shape("perplexity-api-key", "pp", r"(pplx-[A-Za-z0-9]{40,56})" + _W),
    _shape("replicate-api-token", "r8", r"(r8_[A-Za-z0-9]{37})" + _W),
    _shape("huggingface-token", "hf ap", r"(hf_[A-Za-z0-9]{34,40}|api_org_[A-Za-z0-9]{34})" + _W),
    _shape("google-api-key", "AI", r"(AIza[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])"),
    _shape("google-oauth-client-secret", "GO", r"(GOCSPX-[A-Za-z0-9_\-]{28})(?![A-Za-z0-9_\-])"),
    _shape("google-oauth-token", "ya", r"(ya29\.[A-Za-z0-9_\-]{30,400})(?![A-Za-z0-9_\-])"),
    _shape(
        "slack-token",
        "xo xa",
        r"(xox[abposre]-(?:\d{1,20}-){0,4}[A-Za-z0-9\-]{10,200}"
        r"|xapp-\d-[A-Z0-9]{1,20}-\d{1,20}-[a-f0-9]{32,100})",
    ),
    _shape("sendgrid-api-key", "SG", r"(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _W),
    _shape("twilio-api-key", "SK", r"(SK[0-9a-fA-F]{32})" + _W),
    _shape("mailgun-api-key", "ke", r"(key-[0-9a-f]{32})" + _W),
    _shape("npm-token", "np", r"(npm_[A-Za-z0-9]{36})" + _W),
    _shape("pypi-token", "py", r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,400})"),
    _shape("digitalocean-token", "do", r"(do[por]_v1_[a-f0-9]{64})" + _W),
    _shape("shopify-token", "sh", r"(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})" + _W),
    _shape("vault-token", "hv", r"(hv[sbr]\.[A-Za-z0-9_\-]{24,300})" + _W),
    _shape("databricks-token", "da", r"(dapi[a-f0-9]{32}(?:-\d)?)" + _W),
    _shape("linear-api-key", "li", r"(lin_(?:api|oauth)_[A-Za-z0-9]{40})" + _W),
    _shape("atlassian-api-token", "AT", r"(ATATT3[A-Za-z0-9_\-=]{150,250})" + _W),
    _shape(
        "docker-config",
        "ey",
        r"(eyJhdXRocyI6[A-Za-z0-9+/]{16,20000}={0,2})",  # base64 of {"auths":
        check=placeholders.real,
    ),
    _shape(
        "jwt",
        "ey",
        r"(eyJ[A-Za-z0-9_\-]{10,2000}\.eyJ[A-Za-z0-9_\-]{10,4000}\.[A-Za-z0-9_\-]{10,2000})",
        check=lambda v: True,
    ),
    # key ids whose secret follows them (masked as the secret's kind)
    _shape(
        "alibaba-access-key-id",
        "LT",
        r"(LTAI[A-Za-z0-9]{12,30})" + _W,
        pair=_pair("alibaba-access-key-secret", r"[A-Za-z0-9]{30}"),
    ),
    _shape(
        "tencent-secret-id",
        "AK",
        r"(AKID[A-Za-z0-9]{13,40})" + _W,
        pair=_pair("tencent-secret-key", r"[A-Za-z0-9]{32}"),
        mask=False,
    ),
    _shape(
        "gcs-hmac-access-id",
        "GO",
        r"(GOOG1[A-Z0-9]{10,80})" + _W,
        pair=_pair("gcs-hmac-secret", r"[A-Za-z0-9/+]{40}"),
        mask=False,
    ),
    _shape(
        "twilio-account-sid",
        "AC",
        r"(AC[a-f0-9]{32})" + _W,
        pair=_pair("twilio-auth-token", r"[a-f0-9]{32}", lambda v: len(set(v)) >= 8),
        mask=False,
    ),
)
# the catalogues' families a token run meets (families.py), tried first: more specific
# than the shapes above (`glpat-....xx.yyyyyyyyy` whole); the rest are needles.py's
SHAPES = tuple(_shape(k, s, r) for k, s, n, r in families.TABLE if not n) + SHAPES
DISPATCH: dict[str, list[Shape]] = {}
for _s in SHAPES:
    for _k in _s.starts:
        DISPATCH.setdefault(_k, []).append(_s)

# Runs that are plainly not tokens: one-case hex (hashes), digits, lower-case words.
BORING = Lazy(r"[0-9a-f]{1,4096}|[0-9A-F]{1,4096}|[a-z_\-]{1,4096}")
_PREFIXED = Lazy(
    r"(?:(?P<p>[a-z][a-z0-9]{1,9}(?:[._\-][a-z0-9]{1,9}){0,3})[._\-]|(?P<P>[A-Z][A-Z0-9]{1,5})[_\-])"
    r"(?P<b>[A-Za-z0-9_\-]{24,400})" + _W
)
_HASH_WORDS = Lazy(
    r"(?:sha\d{0,3}|md5|blake\d{0,3}|hash|digest|checksum|crc\d{0,2}|commit|rev|build|cache|modules?|"
    r"layer|blob|tree|etag|integrity|uuid|guid|nonce|id|msg|req|run|file|chatcmpl|cus|pi|"
    r"ch|sub|txn|evt|acct|in|ii|price|prod|seti|pm|src|tok|toolu|srvtoolu|batch|asst|thread|"
    r"step|call|resp|org|user|sess|session|conv|item|node|pod|container|image|vol)$"
)
_NAME_PIECE = Lazy(
    r"[A-Za-z]|(?:[A-Z][a-z]{1,30}(?![a-z])|[a-z]{3,30}(?![a-z])|[A-Z]{2,6}(?![a-z])|\d{1,4}(?!\d)){1,40}"
)
_DISCORD = Lazy(
    r"([MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})(?![A-Za-z0-9_\-])"
)
_ID_PARTS = Lazy(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|(?:19|20)\d\d-[01]\d-[0-3]\d[T_-][0-2]\d"
)
_PREFIX_PIECES, _BODY_PIECES = Lazy(r"[._\-]"), Lazy(r"[_\-]")
_TELEGRAM = Lazy(r"(\d{8,10}:A[A-Za-z0-9_\-]{34})(?![A-Za-z0-9_\-])")


def _prefixed(v: str, prefix: str, body: str) -> bool:
    """A vendor-style prefix and a body random enough to be a key: not an id's or a
    hash's prefix, not a name made of words (`BSD-3-Clause-No-Nuclear-License`), and
    long, mixed and changing character class often, as random strings do."""
    last = _PREFIX_PIECES.split(prefix)[-1].lower()
    if _HASH_WORDS.match(last) or _HASH_WORDS.match(prefix.lower()):
        return False
    core = body.replace("-", "").replace("_", "")
    if len(core) < (24 if prefix.isupper() else 28) or not values.not_example(v):
        return False
    if all(_NAME_PIECE.fullmatch(piece) for piece in _BODY_PIECES.split(body) if piece):
        return False  # BSD-3-Clause-No-Nuclear-License, CertAddEncodedCertificate
    if _ID_PARTS.search(body):
        return False  # rollout-2026-11-30T00-59-34-<uuid>: a dated or UUID-named file
    if not core.strip("0123456789abcdef"):  # lower-case hex only
        return len(core) >= 32 and values.entropy(core) >= 3.3
    return (
        values.classes(core) >= 2 and values.switches(core) >= 0.3 and values.entropy(core) >= 3.6
    )


def _discord(v: str) -> bool:
    import base64  # rare: only a run shaped like a Discord token gets here
    import binascii

    first = v.split(".", 1)[0]
    try:
        raw = base64.b64decode(first + "=" * (-len(first) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return raw.isdigit() and 17 <= len(raw) <= 20


def _lead_ok(text: str, p: int) -> bool:
    return p == 0 or not text[p - 1].isalnum()


def _try_shapes(ctx: Context, p: int) -> bool:
    text = ctx.text
    for shape in DISPATCH.get(text[p : p + 2], ()):
        m = shape.regex.match(text, p, min(ctx.n, p + 20500))
        if m is None or not _lead_ok(text, p) or not shape.check(m.group(1)):
            continue
        if shape.mask and not ctx.add(m.start(1), m.end(1), shape.kind):
            continue
        if shape.pair is not None:
            _find_pair(ctx, shape.pair, m.end(1))
        return True
    return False


def _find_pair(ctx: Context, pair: Pair, after: int) -> None:
    """The secret that follows a key id: the next matching token within a short
    distance, on the id's line or the next one."""
    limit = min(ctx.n, after + pair.distance)
    nl = ctx.text.find("\n", after, limit)
    if nl >= 0:
        second = ctx.text.find("\n", nl + 1, limit)
        limit = second if second >= 0 else limit
    ctx.tick(limit - after)
    m = pair.regex.search(ctx.text, after, limit)
    if m and pair.check(m.group(1)):
        ctx.add(m.start(1), m.end(1), pair.kind)


def _examine(ctx: Context, s: int, e: int) -> None:
    """One token run: the provider shapes that can start at it or at the start of the
    dotted token it ends, then the structures that need no provider prefix."""
    text = ctx.text
    starts = [s]
    back = s
    for _ in range(4):  # `SG.`, `hvs.`, `dp.st.prd.`, a JWT's header, a bot id's `id:`
        if back == 0 or text[back - 1] not in ".:~!":  # dp.pt., AstraCS:, sha256~, 00D..!
            break
        sep = k = back - 1
        while k > max(0, sep - 80) and (text[k - 1].isalnum() or text[k - 1] in "_-"):
            k -= 1
        if k == sep:
            break
        starts.insert(0, k)
        back = k
    ctx.tick(s - back + 2)
    for p in starts:
        if _try_shapes(ctx, p):
            return
    if BORING.fullmatch(text, s, e):
        return  # a hash after a dot, looked at for the dotted shapes only
    if text[s] in "MNO":
        m = _DISCORD.match(text, s, min(ctx.n, s + 80))
        if m and _lead_ok(text, s) and _discord(m.group(1)):
            ctx.add(m.start(1), m.end(1), "discord-bot-token")
            return
    if text[s] == "A" and s >= 9 and text[s - 1] == ":":
        j = s - 1
        while j > s - 12 and j > 0 and text[j - 1].isdigit():
            j -= 1
        m = _TELEGRAM.match(text, j, min(ctx.n, s + 40))
        if m:
            ctx.add(m.start(1), m.end(1), "telegram-bot-token")
            return
    for p in starts:
        m = _PREFIXED.match(text, p, min(ctx.n, p + 500))
        prefix = m.group("p") or m.group("P") if m else ""
        if m and _lead_ok(text, p) and _prefixed(m.group(0), prefix, m.group("b")):
            ctx.add(m.start(), m.end(), "prefixed-api-token")
            return


def detect_tokens(ctx: Context) -> None:
    ctx.runs(BORING, _examine)


_PEM_HEAD = Lazy(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = Lazy(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = Lazy(r"[A-Za-z0-9+/=\s:,\-]{0,16384}")
PEM_MAX = 16384


def detect_private_keys(ctx: Context) -> None:
    text = ctx.text
    if "-----BEGIN" not in text:
        return
    ends: list[int] = []
    i = text.find("-----END")
    while i >= 0:
        ends.append(i)
        i = text.find("-----END", i + 8)
    ctx.searched(ctx.n)
    for m in ctx.finditer(_PEM_HEAD, False):
        start, body = m.start(), m.end()
        if ctx.covered(start, body):
            continue
        ctx.tick()
        k = bisect.bisect_left(ends, body)
        if k < len(ends) and ends[k] - body <= PEM_MAX:
            end = _PEM_END.match(text, ends[k], min(ctx.n, ends[k] + 80))
            if end:
                ctx.add(start, end.end(), "private-key")
                continue
        rest = _PEM_BODY.match(text, body, min(ctx.n, body + PEM_MAX))
        ctx.add(start, rest.end() if rest else body, "private-key")
