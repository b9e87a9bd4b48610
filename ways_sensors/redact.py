"""Secret masking for every dispatched record (SPEC section 7).

Every string in the record (nested input, output, extra fields) is scanned; a secret
becomes `[REDACTED:<kind>:<token>]`, where `<token>` is the first 8 hex digits of
HMAC-SHA256(key, secret) under a per-install key: the same secret gives the same token
in every record, rule and session of one install, and another token elsewhere. The
record's `redactions` lists kind, path and token (never the secret).

Two tiers of pattern:
* shapes: formats a provider gave its credentials (`ghp_...`, `AKIA...`, PEM blocks,
  JWTs, `sk-ant-...`), masked wherever they appear;
* names: a value assigned to a name that says secret (`DB_PASSWORD=`, `"api_key": "..."`,
  `--password ...`, `Bearer ...`, `user:pass@host`), masked when the value itself looks
  like a credential: not a reference (`$VAR`, `${VAR}`, `<token>`), not a placeholder
  (`example`, `your-...`, `xxxx`), not a boolean or a plain number, and (for keys and
  tokens, whose names are also used for limits and settings) mixed enough to be random.
Documented example keys (AWS's `...EXAMPLE`, and the like) are never masked.

Speed: each pattern names literal keywords one of its matches must contain; a string
is only searched by the patterns whose keywords occur in it (one lower-cased copy, a
few `in` tests), so long clean tool outputs stay cheap (bench/redact_bench.py).

The key: `<state>/redaction.key`, 32 random bytes, created 0600 on first use.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import string
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import roots


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]  # a match contains one; lower-case unless `cased`
    group: int | str = 0  # the group that is the secret (0: the whole match)
    check: Callable[[str, re.Match[str]], bool] | None = None  # the value looks real
    cased: bool = False  # keywords are looked for in the text as it is, not lower-cased
    whole: bool = False  # always scan the whole text (a match can outgrow a window)
    prefix: str = ""  # the regex's leading literal: absent from the text, skip the regex
    lead: bool = False  # the match must not follow a letter or digit (a \b, checked in
    # Python: a leading \b or lookbehind stops the engine's fast literal-prefix search)


_PLACEHOLDER = re.compile(
    r"example|sample|dummy|placeholder|your[_\-]?|xxxx|\*\*\*|redacted|changeme|change[_-]me|"
    r"replace|insert|fake|test[_-]?(?:key|token|secret)|secret[_-]?here|token[_-]?here|"
    r"^(?:x+|\.+|-+|none|null|nil|true|false|yes|no|on|off|undefined|password|passwd|"
    r"secret|token|pass|string|str|value|key|empty|required|optional|env)$",
    re.I,
)
_REFERENCE = re.compile(r"^(?:\$|%|\{\{|<|\[|`|&|\*)|\$\{|\$\(|\{\{|%\(|\{[a-z_]+\}")
_KNOWN_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    }
)


def _plausible(value: str) -> bool:
    """A value that could be a real credential, not a reference or placeholder."""
    v = value.strip().strip("'\"")
    if not v or v in _KNOWN_EXAMPLES:
        return False
    if _REFERENCE.search(v) or _PLACEHOLDER.search(v):
        return False
    return not re.fullmatch(r"[\d.,_:-]+", v)  # numbers, versions, ports


def _random_enough(value: str) -> bool:
    """Keys and tokens: long, and mixed (digits or both cases or symbols)."""
    v = value.strip("'\"")
    if len(v) < 12 or not _plausible(v):
        return False
    if re.fullmatch(r"[a-z]+(?:[_\-.][a-z]+)*", v) or re.fullmatch(r"[A-Z]+(?:[_\-.][A-Z]+)*", v):
        return False  # snake_case words, CONSTANT_NAMES, dotted.names
    if re.fullmatch(r"(?:[A-Za-z]+[/.:])+[A-Za-z]+", v):
        return False  # paths and dotted identifiers
    classes = sum(bool(re.search(p, v)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z\d]"))
    return classes >= 2 and len(set(v)) >= 6


def _password_like(value: str) -> bool:
    """Passwords: anything plausible of 4+ characters (hunter2 is a password)."""
    v = value.strip("'\"")
    return len(v) >= 4 and _plausible(v) and not re.fullmatch(r"[a-z]+_[a-z_]+", v)


def _not_example(value: str) -> bool:
    return value not in _KNOWN_EXAMPLES and "EXAMPLE" not in value.upper()


def _p(
    kind: str,
    regex: str,
    keywords: Iterable[str] = (),
    group: int | str = 1,
    check: Callable[[str], bool] | None = _not_example,
    cased: bool = False,
    whole: bool = False,
    lead: bool = True,
) -> Pattern:
    """A shape. Without keywords the regex must start with a literal: the engine then
    finds candidates as fast as str.find, and one scan is the whole cost."""
    wrapped = (lambda v, m: check(v)) if check else None
    return Pattern(
        kind,
        re.compile(regex),
        tuple(keywords),
        group,
        wrapped,
        cased,
        whole,
        "" if keywords else _literal_prefix(regex),
        lead,
    )


def _literal_prefix(regex: str) -> str:
    """The characters every match of `regex` starts with (up to the first metacharacter)."""
    out = []
    for ch in regex.lstrip("("):
        if ch in "\\.[](){}*+?|^$":
            break
        out.append(ch)
    return "".join(out)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def name_of(text: str, kw_start: int, kw_end: int) -> tuple[str, int]:
    """The whole name a keyword ends (`DB_PASSWORD` for `PASSWORD`) and where it starts."""
    i = kw_start
    while i > 0 and text[i - 1] in _NAME_CHARS:
        i -= 1
    return text[i:kw_end], i


_PASSWORD_NAME = re.compile(
    r"(?:password|passwd|passphrase|pwd|pass|secret|credentials?|salt)$", re.I
)


# Ordered: specific shapes before generic ones (a span masked once is not masked again).
# Most start with a literal and need no keywords; the others name the keywords that
# must occur (lower-case unless cased) and are searched only in windows around them.
_W = r"(?![A-Za-z0-9])"  # a trailing boundary (cheap: it only runs after a match)
PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private-key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|\Z)",
        group=0,
        check=None,
        lead=False,
    ),
    _p("age-secret-key", r"(AGE-SECRET-KEY-1[0-9A-Z]{58})" + _W),
    _p("aws-access-key-id", r"(A(?:KIA|SIA|BIA|CCA|ROA|IDA)[A-Z2-7]{16})(?![A-Z0-9])"),
    _p(
        "aws-secret-access-key",
        r"(?i)(?:aws|amazon)[\w .\-]{0,30}?(?:secret|private)[\w .\-]{0,20}?(?:key)?"
        r"[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        ["aws", "amazon"],
        lead=False,
    ),
    _p("github-token", r"(gh[pousr]_[A-Za-z0-9]{36,255})" + _W),
    _p("github-fine-grained-token", r"(github_pat_[A-Za-z0-9_]{60,255})" + _W),
    _p("gitlab-token", r"(gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_\-]{20,})"),
    _p("gitlab-token", r"(GR1348941[A-Za-z0-9_\-]{20,})"),
    _p("anthropic-api-key", r"(sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{32,200})"),
    _p(
        "openai-api-key",
        r"(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}"
        r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})",
    ),
    _p("groq-api-key", r"(gsk_[A-Za-z0-9]{48,56})" + _W),
    _p("xai-api-key", r"(xai-[A-Za-z0-9]{70,90})" + _W),
    _p("perplexity-api-key", r"(pplx-[A-Za-z0-9]{40,56})" + _W),
    _p("replicate-api-token", r"(r8_[A-Za-z0-9]{37})" + _W),
    _p("huggingface-token", r"(hf_[A-Za-z0-9]{34,40})" + _W),
    _p("google-api-key", r"(AIza[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])"),
    _p("google-oauth-client-secret", r"(GOCSPX-[A-Za-z0-9_\-]{28})(?![A-Za-z0-9_\-])"),
    _p("slack-token", r"(xox[abposre]-(?:\d+-)*[A-Za-z0-9\-]{10,})"),
    _p("slack-token", r"(xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,})"),
    _p(
        "slack-webhook",
        r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,})",
        lead=False,
    ),
    _p(
        "discord-webhook",
        r"(https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/[A-Za-z0-9_\-]{60,70})",
        lead=False,
    ),
    _p(
        "discord-bot-token",
        r"([MNO][A-Za-z\d]{23,27}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,40})" + _W,
        ["discord", "bot "],
        check=lambda v: bool(re.search(r"\d", v.split(".")[0])),
    ),
    _p(
        "telegram-bot-token",
        r"(\d{8,10}:AA[A-Za-z0-9_\-]{33})(?![A-Za-z0-9_\-])",
        [":AA"],
        cased=True,
        lead=False,
    ),
    _p(
        "stripe-key",
        r"([sr]k_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{32,})",
        ["k_live_", "k_test_", "whsec_"],
        cased=True,
    ),
    _p("sendgrid-api-key", r"(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _W),
    _p("twilio-api-key", r"(SK[0-9a-f]{32})" + _W),
    _p("mailgun-api-key", r"(key-[0-9a-f]{32})" + _W),
    _p("npm-token", r"(npm_[A-Za-z0-9]{36})" + _W),
    _p("pypi-token", r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})"),
    _p("digitalocean-token", r"(do[por]_v1_[a-f0-9]{64})" + _W),
    _p("shopify-token", r"(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})" + _W),
    _p("vault-token", r"(hv[sbr]\.[A-Za-z0-9_\-]{24,})" + _W),
    _p("databricks-token", r"(dapi[a-f0-9]{32}(?:-\d)?)" + _W),
    _p("linear-api-key", r"(lin_(?:api|oauth)_[A-Za-z0-9]{40})" + _W),
    _p("azure-storage-key", r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)", ["accountkey="], lead=False),
    _p("jwt", r"(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})"),
    _p(
        "connection-string-password",
        r"://[^\s:/@'\"<>]{1,64}:([^\s/'\"<>]{2,200})@[^\s@/'\"<>]+",
        check=_password_like,
        lead=False,
    ),
    _p(
        "bearer-token",
        r"(?i)(?:bearer|authorization:\s*token)\s+([A-Za-z0-9_\-.~+/]{16,}=*)"
        r"(?![A-Za-z0-9_\-.~+/=])",
        ["bearer", "authorization"],
        check=_random_enough,
    ),
    _p(
        "basic-auth-header",
        r"(?i)basic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])",
        ["basic"],
        check=_random_enough,
    ),
    _p(
        "url-query-secret",
        r"(?i)[?&](?:access_token|api_?key|apikey|token|secret|password|auth|sig|signature|"
        r"client_secret|key)=([^&\s#'\"<>]{8,})",
        ["token=", "key=", "secret=", "password=", "auth=", "sig=", "signature="],
        check=_random_enough,
        lead=False,
    ),
    _p(
        "api-key-header",
        r"(?i)(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|"
        r"x-apikey|apikey|x-api-token|x-token)\s*:\s*([^\s\"',;]{8,})",
        [
            "api-key",
            "auth-token",
            "access-token",
            "private-token",
            "apikey",
            "api-token",
            "x-token",
        ],
        check=_random_enough,
        lead=False,
    ),
    _p(
        "cli-password",
        r"(?:--password[= ]|--passwd[= ]|--pass[= ]|\bsshpass\s+-p\s*|\bPGPASSWORD=|"
        r"\bMYSQL_PWD=|\b(?:mysql|mariadb|mysqldump|mysqladmin)\b[^\n|;]*?\s-p(?=[^\s-]))"
        r"['\"]?([^\s'\"]{3,})['\"]?",
        ["--pass", "sshpass", "pgpassword", "mysql_pwd", "mysql", "mariadb"],
        check=_password_like,
        lead=False,
    ),
)

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True)
class Named:
    """A value assigned to a name that says secret, found literal-first: one regex per
    name word (`password`, `token`, ...), each starting with that word, so Python's
    engine jumps from one occurrence to the next instead of trying every position."""

    kind: str
    template: str  # `{w}` is the word; group `value` is the secret
    words: tuple[str, ...]
    check: Callable[[str, str, int, int], bool]
    cased: bool  # True: the words are matched as written (UPPER for env names)

    def regexes(self) -> list[tuple[str, re.Pattern[str]]]:
        out = []
        for w in self.words:
            word = _WORD_RX.get(w.lower(), re.escape(w.lower()))
            word = word.upper() if self.cased else word
            out.append((w, re.compile(self.template.replace("{w}", word), re.M)))
        return out


def _named(value: str, text: str, kw_start: int, kw_end: int) -> bool:
    name, _ = name_of(text, kw_start, kw_end)
    if _PASSWORD_NAME.search(name.replace("-", "_")):
        return _password_like(value)
    return _random_enough(value)


def _env_named(value: str, text: str, kw_start: int, kw_end: int) -> bool:
    """An env assignment: the name stands alone (line start, a blank, `;`, `export`...)."""
    name, i = name_of(text, kw_start, kw_end)
    before = text[i - 1 : i] if i else ""
    if "." in name or "-" in name or (before and before not in " \t\n;&|(`"):
        return False
    return _named(value, text, kw_start, kw_end)


def _yaml_named(value: str, text: str, kw_start: int, kw_end: int) -> bool:
    """A `name: value` line: only blanks or a list dash before the name."""
    _, i = name_of(text, kw_start, kw_end)
    line_start = text.rfind("\n", 0, i) + 1
    if text[line_start:i].strip(" \t-"):
        return False
    return _named(value, text, kw_start, kw_end)


def _field(value: str, text: str, kw_start: int, kw_end: int, bare: bool = False) -> bool:
    return (_yaml_named if bare else _named)(value, text, kw_start, kw_end)


_WORDS = ("pass", "pwd", "secret", "key", "token", "credential", "salt", "dsn")
_WORD_RX = {"pass": "pass(?:word|wd|phrase)?", "credential": "credentials?"}
NAMED: tuple[Named, ...] = (
    Named(
        "env-assignment",
        r"{w}[ \t]*=[ \t]*['\"]?(?P<value>[^\s'\";&|]{3,})",
        tuple(w.upper() for w in _WORDS),
        _env_named,
        cased=True,
    ),
    # "name": "value", name = 'value', name => "value"; or a YAML line name: value
    Named(
        "secret-field",
        r"{w}(?:[\"']?\s*(?::|=>|=|:=)\s*(?P<q>[\"'])(?P<value>[^\"'\n]{3,400})"
        r"(?P=q)|[ \t]*[:=][ \t]*(?P<bare>[^\s\"'#;][^\s#;]{2,200})[ \t]*$)",
        _WORDS,
        _field,
        cased=False,
    ),
)
_NAMED_REGEXES = [(n, w, rx) for n in NAMED for w, rx in n.regexes()]

KINDS: tuple[str, ...] = tuple(dict.fromkeys([p.kind for p in PATTERNS] + [n.kind for n in NAMED]))

_key_lock = threading.Lock()
_key: bytes | None = None


def key_path() -> str:
    from .layout import Layout

    return Layout().redaction_key()


def install_key() -> bytes:
    """The per-install HMAC key, created 0600 (in a 0700 folder) on first use."""
    global _key
    with _key_lock:
        path = key_path()
        if _key is not None and getattr(install_key, "path", None) == path:
            return _key
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        if len(data) < 32:
            roots.makedirs_private(os.path.dirname(path))
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    data = os.urandom(32)
                    f.write(data)
            except FileExistsError:  # another process won the race: use its key
                with open(path, "rb") as f:
                    data = f.read()
        _key = data[:32]
        install_key.path = path  # type: ignore[attr-defined]
        return _key


def token(secret: str) -> str:
    return hmac.new(
        install_key(), secret.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).hexdigest()[:8]


WINDOW_BACK, WINDOW_AHEAD, MAX_WINDOWS = 256, 4096, 64


def _word_end(m: re.Match[str]) -> int:
    """Where the name word of a Named match ends (its letters from the match start)."""
    s, i = m.string, m.start()
    while i < m.end() and s[i].isalpha():
        i += 1
    return i


def _matches(p: Pattern, text: str, lowered: str):
    """The pattern's matches, searched only around its keywords when they are few."""
    if not p.keywords:
        yield from p.regex.finditer(text)
        return
    hay = text if p.cased else lowered
    hits: list[int] = []
    for k in p.keywords:
        i = hay.find(k)
        while i >= 0 and len(hits) <= MAX_WINDOWS:
            hits.append(i)
            i = hay.find(k, i + 1)
    if not hits:
        return
    if p.whole or len(hits) > MAX_WINDOWS:
        yield from p.regex.finditer(text)
        return
    hits.sort()
    lo, hi = max(0, hits[0] - WINDOW_BACK), hits[0] + WINDOW_AHEAD
    windows = []
    for i in hits[1:]:
        if i - WINDOW_BACK <= hi:
            hi = i + WINDOW_AHEAD
        else:
            windows.append((lo, hi))
            lo, hi = max(0, i - WINDOW_BACK), i + WINDOW_AHEAD
    windows.append((lo, hi))
    for lo, hi in windows:
        yield from p.regex.finditer(text, lo, min(hi, len(text)))


MIN_SECRET = 8  # no pattern matches in fewer characters (`PWD=abcd` is the shortest)


def find(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in `text`, without overlaps, in order."""
    spans: list[tuple[int, int, str]] = []
    if len(text) < MIN_SECRET:
        return spans
    lowered = text.lower()
    small = len(text) < 4096  # an `in` test is cheaper than starting a regex scan
    for p in PATTERNS:
        if p.prefix and small and p.prefix not in text:
            continue
        for m in _matches(p, text, lowered):
            start, end = m.span(p.group)
            if start < 0 or end <= start:
                continue
            if p.lead and m.start() and text[m.start() - 1].isalnum():
                continue
            value = m.group(p.group)
            if p.check is not None and not p.check(value, m):
                continue
            if value.startswith("[REDACTED:"):
                continue
            if any(s < end and start < e for s, e, _ in spans):
                continue
            spans.append((start, end, p.kind))
    folded = text.translate(_ASCII_LOWER)  # same length as text, unlike str.lower()
    for n, word, rx in _NAMED_REGEXES:
        hay = text if n.cased else folded
        if small and (word if n.cased else word.lower()) not in hay:
            continue
        for m in rx.finditer(hay):
            bare = "bare" in rx.groupindex and m.group("bare") is not None
            start, end = m.span("bare" if bare else "value")
            value = text[start:end]
            kw_end = _word_end(m)
            ok = (
                n.check(value, text, m.start(), kw_end, bare)
                if n.check is _field
                else n.check(value, text, m.start(), kw_end)
            )
            if not ok or value.startswith("[REDACTED:"):
                continue
            if any(s < end and start < e for s, e, _ in spans):
                continue
            spans.append((start, end, n.kind))
    spans.sort()
    return spans


def mask_text(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The text with every secret replaced, and [(kind, token)] in order of appearance."""
    spans = find(text)
    if not spans:
        return text, []
    out, found, pos = [], [], 0
    for start, end, kind in spans:
        t = token(text[start:end])
        out.append(text[pos:start])
        out.append(f"[REDACTED:{kind}:{t}]")
        found.append((kind, t))
        pos = end
    out.append(text[pos:])
    return "".join(out), found


def _walk(value: Any, path: str, found: list[dict[str, str]]) -> Any:
    if isinstance(value, str):
        masked, hits = mask_text(value)
        found.extend({"kind": k, "path": path, "token": t} for k, t in hits)
        return masked
    if isinstance(value, dict):
        return {k: _walk(v, f"{path}.{k}" if path else str(k), found) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, f"{path}.{i}", found) for i, v in enumerate(value)]
    return value


def mask_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with every string masked and, when anything was, `redactions` set."""
    found: list[dict[str, str]] = []
    out = {
        k: (v if k in ("schema", "chain", "redactions") else _walk(v, k, found))
        for k, v in record.items()
    }
    if found:
        out["redactions"] = found
    return out
