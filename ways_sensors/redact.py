"""Secret masking for every dispatched record (SPEC section 7).

Every string in the record (nested input, output, extra fields) is scanned; a secret
becomes `[REDACTED:<kind>:<token>]`, where `<token>` is the first 8 hex digits of
HMAC-SHA256(key, secret) under a per-install key: the same secret gives the same token
in every record, rule and session of one install, and another token elsewhere. The
record's `redactions` lists kind, path and token (never the secret).

Speed: each pattern names the literal keywords one of its matches must contain; a
string is only searched by the patterns whose keywords occur in it (one lower-cased
copy, a few `in` tests), so long clean tool outputs stay cheap.

The key: `<state>/redaction.key`, 32 random bytes, created 0600 on first use.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import roots


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]  # lower-case; a match contains at least one of them
    group: int = 0  # the group that is the secret (0: the whole match)


def _p(kind: str, regex: str, keywords: Iterable[str], group: int = 0, flags: int = 0) -> Pattern:
    return Pattern(kind, re.compile(regex, flags), tuple(keywords), group)


# Ordered: specific shapes before generic ones (a span masked once is not masked again).
PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private-key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
        r"(-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|\Z)",
        ["private key"],
    ),
    _p(
        "aws-access-key-id",
        r"\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
        ["akia", "asia", "abia", "acca"],
        1,
    ),
    _p(
        "aws-secret-access-key",
        r"(?i)aws.{0,20}?(?:secret|private).{0,20}?['\"=:\s]\s*['\"]?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        ["aws"],
        1,
    ),
    _p(
        "github-token",
        r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b",
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        1,
    ),
    _p("github-fine-grained-token", r"\b(github_pat_[A-Za-z0-9_]{60,255})\b", ["github_pat_"], 1),
    _p("gitlab-token", r"\b(glpat-[A-Za-z0-9_\-]{20,})\b", ["glpat-"], 1),
    _p(
        "anthropic-api-key", r"\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,120})", ["sk-ant-"], 1
    ),
    _p(
        "openai-api-key",
        r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}"
        r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})",
        ["sk-"],
        1,
    ),
    _p("google-api-key", r"\b(AIza[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])", ["aiza"], 1),
    _p("slack-token", r"\b(xox[abposr]-(?:\d+-)+[A-Za-z0-9\-]{10,})", ["xox"], 1),
    _p(
        "slack-webhook",
        r"(https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/_\-]{20,})",
        ["hooks.slack.com"],
        1,
    ),
    _p(
        "stripe-key",
        r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,})",
        ["sk_live", "sk_test", "rk_live", "rk_test"],
        1,
    ),
    _p("jwt", r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})", ["eyj"], 1),
    _p(
        "connection-string-password",
        r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'\"]{1,64}:([^\s@/'\"]{3,128})@[^\s'\"]+",
        ["://"],
        1,
    ),
    _p("bearer-token", r"(?i)\bbearer\s+([A-Za-z0-9_\-.~+/]{16,}=*)", ["bearer"], 1),
    _p(
        "basic-auth-header",
        r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{12,}={0,2})",
        ["basic"],
        1,
    ),
    _p(
        "env-assignment",
        r"(?im)^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PWD|"
        r"API_?KEY|PRIVATE_KEY|ACCESS_KEY|SECRET_KEY|CREDENTIALS?|AUTH)[A-Z0-9_]*"
        r"[ \t]*[=:][ \t]*['\"]?([^\s'\"#]{6,})",
        ["token", "secret", "password", "passwd", "pwd", "key", "credential", "auth"],
        1,
    ),
)

_key_lock = threading.Lock()
_key: bytes | None = None


def key_path() -> str:
    return os.path.join(roots.state_root(), "redaction.key")


def install_key() -> bytes:
    """The per-install HMAC key, created 0600 (in a 0700 folder) on first use."""
    global _key
    with _key_lock:
        if _key is not None:
            return _key
        path = key_path()
        try:
            with open(path, "rb") as f:
                data = f.read()
            if len(data) >= 32:
                _key = data[:32]
                return _key
        except FileNotFoundError:
            pass
        roots.makedirs_private(os.path.dirname(path))
        data = os.urandom(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except FileExistsError:  # another process won the race: use its key
            with open(path, "rb") as f:
                data = f.read()[:32]
        _key = data
        return _key


def token(secret: str) -> str:
    return hmac.new(
        install_key(), secret.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).hexdigest()[:8]


def mask_text(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The text with every secret replaced, and [(kind, token)] in order of appearance."""
    lowered = text.lower()
    spans: list[tuple[int, int, str]] = []
    for p in PATTERNS:
        if not any(k in lowered for k in p.keywords):
            continue
        for m in p.regex.finditer(text):
            start, end = m.span(p.group)
            if start < 0 or end <= start:
                continue
            if any(s < end and start < e for s, e, _ in spans):
                continue
            spans.append((start, end, p.kind))
    if not spans:
        return text, []
    spans.sort()
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
