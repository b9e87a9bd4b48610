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
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import roots


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]  # lower-case; a match contains at least one of them
    group: int = 0  # the group that is the secret (0: the whole match)
    check: Callable[[str, re.Match[str]], bool] | None = None  # the value looks real


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
    keywords: Iterable[str],
    group: int = 0,
    flags: int = 0,
    check: Callable[[str], bool] | None = _not_example,
) -> Pattern:
    wrapped = (lambda v, m: check(v)) if check else None
    return Pattern(kind, re.compile(regex, flags), tuple(keywords), group, wrapped)


_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|pass|secret|secret[_-]?key|client[_-]?secret|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|bearer[_-]?token|token|credentials?|salt|signing[_-]?key|"
    r"encryption[_-]?key|master[_-]?key|session[_-]?key|webhook[_-]?secret|dsn)"
)
_PASSWORD_NAME = re.compile(
    r"(?:password|passwd|passphrase|pwd|pass|secret|credentials?|salt)$", re.I
)


def _named(value: str, m: re.Match[str]) -> bool:
    name = m.group("name")
    if _PASSWORD_NAME.search(name.replace("-", "_")):
        return _password_like(value)
    return _random_enough(value)


# Ordered: specific shapes before generic ones (a span masked once is not masked again).
PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private-key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|\Z)",
        ["private key"],
        check=None,
    ),
    _p("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", ["age-secret-key"]),
    _p(
        "aws-access-key-id",
        r"\b((?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z2-7]{16})\b",
        ["akia", "asia", "abia", "acca", "aroa", "aida"],
        1,
    ),
    _p(
        "aws-secret-access-key",
        r"(?i)(?:aws|amazon)[\w .\-]{0,30}?(?:secret|private)[\w .\-]{0,20}?(?:key)?"
        r"[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        ["aws", "amazon"],
        1,
    ),
    _p(
        "github-token",
        r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b",
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        1,
    ),
    _p("github-fine-grained-token", r"\b(github_pat_[A-Za-z0-9_]{60,255})\b", ["github_pat_"], 1),
    _p(
        "gitlab-token",
        r"\b((?:glpat|gldt|glrt|glptt|glsoat|glcbt)-[A-Za-z0-9_\-]{20,}|"
        r"GR1348941[A-Za-z0-9_\-]{20,})",
        ["glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "gr1348941"],
        1,
    ),
    _p(
        "anthropic-api-key",
        r"\b(sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{32,200})",
        ["sk-ant-"],
        1,
    ),
    _p(
        "openai-api-key",
        r"\b(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}"
        r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})",
        ["sk-"],
        1,
    ),
    _p("groq-api-key", r"\b(gsk_[A-Za-z0-9]{48,56})\b", ["gsk_"], 1),
    _p("xai-api-key", r"\b(xai-[A-Za-z0-9]{70,90})\b", ["xai-"], 1),
    _p("perplexity-api-key", r"\b(pplx-[A-Za-z0-9]{40,56})\b", ["pplx-"], 1),
    _p("replicate-api-token", r"\b(r8_[A-Za-z0-9]{37})\b", ["r8_"], 1),
    _p("huggingface-token", r"\b(hf_[A-Za-z0-9]{34,40})\b", ["hf_"], 1),
    _p("google-api-key", r"\b(AIza[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])", ["aiza"], 1),
    _p(
        "google-oauth-client-secret",
        r"\b(GOCSPX-[A-Za-z0-9_\-]{28})(?![A-Za-z0-9_\-])",
        ["gocspx-"],
        1,
    ),
    _p(
        "slack-token",
        r"\b(xox[abposre]-(?:\d+-)*[A-Za-z0-9\-]{10,}|xapp-\d-[A-Z0-9]+-\d+-"
        r"[a-f0-9]{32,})",
        ["xox", "xapp-"],
        1,
    ),
    _p(
        "slack-webhook",
        r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,})",
        ["hooks.slack.com"],
        1,
    ),
    _p(
        "discord-webhook",
        r"(https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/[A-Za-z0-9_\-]{60,70})",
        ["discord"],
        1,
    ),
    _p(
        "discord-bot-token",
        r"\b([MNO][A-Za-z\d]{23,27}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,40})\b",
        ["."],
        1,
        check=lambda v: bool(re.search(r"\d", v.split(".")[0])),
    ),
    _p(
        "telegram-bot-token",
        r"(?<![0-9])(\d{8,10}:AA[A-Za-z0-9_\-]{33})(?![A-Za-z0-9_\-])",
        [":aa"],
        1,
    ),
    _p(
        "stripe-key",
        r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{32,})",
        ["sk_live", "sk_test", "rk_live", "rk_test", "whsec_"],
        1,
    ),
    _p("sendgrid-api-key", r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b", ["sg."], 1),
    _p("twilio-api-key", r"\b(SK[0-9a-f]{32})\b", ["sk"], 1),
    _p("mailgun-api-key", r"\b(key-[0-9a-f]{32})\b", ["key-"], 1),
    _p("npm-token", r"\b(npm_[A-Za-z0-9]{36})\b", ["npm_"], 1),
    _p("pypi-token", r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})", ["pypi-ageichlwas5vcmc"], 1),
    _p(
        "digitalocean-token", r"\b(do[por]_v1_[a-f0-9]{64})\b", ["dop_v1_", "doo_v1_", "dor_v1_"], 1
    ),
    _p(
        "shopify-token",
        r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b",
        ["shpat_", "shpca_", "shppa_", "shpss_"],
        1,
    ),
    _p("vault-token", r"\b(hv[sbr]\.[A-Za-z0-9_\-]{24,})\b", ["hvs.", "hvb.", "hvr."], 1),
    _p("databricks-token", r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b", ["dapi"], 1),
    _p("linear-api-key", r"\b(lin_(?:api|oauth)_[A-Za-z0-9]{40})\b", ["lin_api_", "lin_oauth_"], 1),
    _p("azure-storage-key", r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)", ["accountkey="], 1),
    _p(
        "jwt",
        r"\b(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})",
        ["eyj"],
        1,
    ),
    _p(
        "connection-string-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@'\"<>]{1,64}:([^\s/'\"<>]{2,200})@"
        r"[^\s@/'\"<>]+",
        ["://"],
        1,
        check=_password_like,
    ),
    _p(
        "bearer-token",
        r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9_\-.~+/]{16,}=*)(?![A-Za-z0-9_\-.~+/=])",
        ["bearer", "token"],
        1,
        check=_random_enough,
    ),
    _p(
        "basic-auth-header",
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])",
        ["basic"],
        1,
        check=_random_enough,
    ),
    _p(
        "url-query-secret",
        r"(?i)[?&](?:access_token|api_?key|apikey|token|secret|password|auth|sig|signature|"
        r"client_secret|key)=([^&\s#'\"<>]{8,})",
        ["token=", "key=", "secret=", "password=", "auth=", "sig=", "signature="],
        1,
        check=_random_enough,
    ),
    _p(
        "cli-password",
        r"(?:--password[= ]|--passwd[= ]|--pass[= ]|\bsshpass\s+-p\s*|\bPGPASSWORD=|"
        r"\bMYSQL_PWD=|\b(?:mysql|mariadb|mysqldump|mysqladmin)\b[^\n|;]*?\s-p(?=[^\s-]))"
        r"['\"]?([^\s'\"]{3,})['\"]?",
        ["--pass", "sshpass", "pgpassword", "mysql_pwd", "mysql", "mariadb"],
        1,
        check=_password_like,
    ),
)

# names that say secret: KEY=value, "key": "value", key: value, key = 'value'
NAMED: tuple[Pattern, ...] = (
    Pattern(
        "env-assignment",
        re.compile(
            r"(?m)(?:^|[\s;&|(]|\bexport\s+|\bset\s+)(?P<name>[A-Za-z][A-Za-z0-9_]*?"
            r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PWD|PASS|API_?KEY|APIKEY|ACCESS_KEY|"
            r"SECRET_KEY|PRIVATE_KEY|AUTH_KEY|SIGNING_KEY|ENCRYPTION_KEY|MASTER_KEY|_KEY|"
            r"CREDENTIALS?|SALT|DSN))[ \t]*=[ \t]*(?P<q>['\"]?)(?P<value>[^\s'\";&|]{3,})"
        ),
        ("token", "secret", "pass", "pwd", "key", "credential", "salt", "dsn"),
        3,
        _named,
    ),
    Pattern(
        "secret-field",
        re.compile(
            r"(?i)(?P<name>[\"']?[A-Za-z0-9_.\-]*" + _SECRET_NAME + r")[\"']?\s*(?::|=>|=|:=)\s*"
            r"(?P<q>[\"'])(?P<value>[^\"'\n]{3,400})(?P=q)"
        ),
        ("pass", "pwd", "secret", "key", "token", "credential", "salt", "dsn"),
        3,
        _named,
    ),
    Pattern(
        "secret-field",
        re.compile(
            r"(?im)^[ \t-]*(?P<name>[A-Za-z0-9_.\-]*" + _SECRET_NAME + r")[ \t]*:[ \t]+"
            r"(?P<value>[^\s\"'#][^\s#]{2,200})[ \t]*$"
        ),
        ("pass", "pwd", "secret", "key", "token", "credential", "salt", "dsn"),
        2,
        _named,
    ),
)

ALL: tuple[Pattern, ...] = PATTERNS + NAMED
KINDS: tuple[str, ...] = tuple(dict.fromkeys(p.kind for p in ALL))

_key_lock = threading.Lock()
_key: bytes | None = None


def key_path() -> str:
    return os.path.join(roots.state_root(), "redaction.key")


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


def find(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in `text`, without overlaps, in order."""
    lowered = text.lower()
    spans: list[tuple[int, int, str]] = []
    for p in ALL:
        if not any(k in lowered for k in p.keywords):
            continue
        for m in p.regex.finditer(text):
            start, end = m.span(p.group)
            if start < 0 or end <= start:
                continue
            value = m.group(p.group)
            if p.check is not None and not p.check(value, m):
                continue
            if value.startswith("[REDACTED:"):
                continue
            if any(s < end and start < e for s, e, _ in spans):
                continue
            spans.append((start, end, p.kind))
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
