"""Is this value a secret? The judgement every detector asks of what it found.

A name that says secret (`password`, `api_key`) or a place that holds one (a URL's
userinfo, a `-p` flag) only says where a secret would be; the value decides. It is not
a secret when it is a reference (`$VAR`, `${VAR}`, `{{ x }}`, `<token>`), code that
reads a secret (`os.getenv("X")`, `process.env.X`, `ENV["X"]`, `secrets.X`,
`this.apiKey`), a placeholder (`example`, `your-...`, `xxxx`, `changeme`), a boolean
or a plain number. Keys and tokens, whose names are also used for limits and
settings, must moreover be mixed enough to be random; passwords may be short words
with a digit (hunter2). Documented example keys (AWS's `...EXAMPLE`) are never secrets.
Every function here looks at a bounded value (callers cap its length), so each costs
at most a few passes over a few hundred characters.
"""

from __future__ import annotations

import math

from ..regex import IGNORECASE, Lazy

PLACEHOLDER = Lazy(
    r"example|sample|dummy|placeholder|your[_\-]?|xxxx|\*\*\*|redacted|changeme|change[_-]me|"
    r"replace|insert|fake|test[_-]?(?:key|token|secret)|secret[_-]?here|token[_-]?here|"
    r"^(?:x{1,64}|\.{1,64}|-{1,64}|none|null|nil|true|false|yes|no|on|off|undefined|password|passwd|pass|"
    r"secret|token|string|str|value|key|empty|required|optional|env|pwd|auth|username|user|"
    r"changeit|hidden|masked|secrets|credentials?|test|testing)$",
    IGNORECASE,
)
REFERENCE = Lazy(
    r"^(?:\$|\{\{|<|\[|`|&|\*|@\{)|\$\{|\$\(|\{\{|%\(|\{[a-z_]{1,64}\}|^env:|^file:|^%\w{1,64}%$"
)
KNOWN_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        # a Bedrock short-lived key's constant head (base64 of the service's host): the
        # token is what follows it (needles.py)
        "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",
    }
)
_NUMBERISH = Lazy(r"[\d.,_:+\-]{1,4096}")
_DOTTED_PATH = Lazy(
    r"[A-Za-z_$][\w$]{0,64}(?:(?:\.|::|->)[A-Za-z_$][\w$]{0,64}){1,16}(?:\(\))?[;,]?"
)
_MEMBER = Lazy(r"\.|::|->")  # what joins a dotted path's segments
_SEGMENT = Lazy(r"[A-Za-z_$]{1,128}\d{0,3}")
TEMPLATE = Lazy(r"\{[^{}\s]{1,80}\}")
# a value made of words, one of which names a secret (`url-credentials`, `db_password`):
# the name of a secret, not one
_SECRET_NAME = Lazy(
    r"(?:[a-z]{1,32}[_\-.]){0,8}[a-z]{0,32}(?:pass(?:word|wd)?|pwd|secret|token|key|credentials?|auth)"
    r"(?:[_\-.][a-z]{1,32}){0,8}",
    IGNORECASE,
)
_PATH = Lazy(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)[\w./\\\-]{0,400}")
_TYPES = Lazy(
    r"(?:bool|boolean|str|string|int|integer|float|double|bytes|list|dict|tuple|set|any|"
    r"object|none|optional|number|char|void|secretstr|hiddentext)$",
    IGNORECASE,
)
_CALL_OR_INDEX = Lazy(r"[A-Za-z_$][\w$]{0,64}(?:(?:\.|::|->)[A-Za-z_$][\w$]{0,64}){0,16}[(\[]")
_CONSTANT_NAME = Lazy(r"[A-Z][A-Z0-9]{0,64}(?:_[A-Z0-9]{1,64}){1,16}")
_WORDS = Lazy(
    r"[a-z]{1,64}(?:[_\-.][a-z]{1,64}){0,32}|[A-Z]{1,64}(?:[_\-.][A-Z]{1,64}){0,32}"
    r"|[A-Z]?[a-z]{1,64}(?:[A-Z][a-z]{1,64}){0,32}"
)
_PATHLIKE = Lazy(r"(?:[A-Za-z]{1,64}[/.:]){1,32}[A-Za-z]{1,64}")
_CLASSES = (Lazy(r"[a-z]"), Lazy(r"[A-Z]"), Lazy(r"\d"), Lazy(r"[^\w]"))


def unquote(value: str) -> str:
    return value.strip().strip("'\"")


def classes(value: str) -> int:
    """How many of lower, upper, digit and symbol the value mixes."""
    return sum(bool(c.search(value)) for c in _CLASSES)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    if not n:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def switches(value: str) -> float:
    """How often the character class (lower, upper, digit, other) changes from one
    character to the next: about 0.6 in a random token, under 0.25 in words and names."""
    if len(value) < 2:
        return 0.0

    def cls(c: str) -> int:
        return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3

    n = sum(cls(value[i]) != cls(value[i + 1]) for i in range(len(value) - 1))
    return n / (len(value) - 1)


def expression(value: str, after: str = "") -> bool:
    """Code that reads a secret rather than a secret: a dotted path (`process.env.KEY`,
    `this.apiKey`, `secrets.NPM_TOKEN`), a call or an index (`os.getenv("KEY")`,
    `ENV["KEY"]`, `request.form['password']`) whose bracket closes in the value or in
    `after` (the rest of the line) or continues on the next line, a parenthesised
    expression, a template placeholder, or an environment variable's own name."""
    v = value.strip().rstrip(";,:")
    if not v:
        return False
    if v[0] == "(" or _CONSTANT_NAME.fullmatch(v) or TEMPLATE.match(v):
        return True
    if _DOTTED_PATH.fullmatch(v) and all(_identifier(seg) for seg in _MEMBER.split(v.rstrip("()"))):
        return True
    m = _CALL_OR_INDEX.match(v)
    if m:
        close = ")" if v[m.end() - 1] == "(" else "]"
        rest = after.rstrip()
        return (
            m.end() == len(v)
            or close in v[m.end() :]
            or close in after
            or rest.endswith((",", "(", "["))
        )
    return False


def _identifier(segment: str) -> bool:
    """A name a programmer wrote (`env`, `apiKey`, `OPENAI_API_KEY`, `v2`), not a
    random token's piece (`Zf2K59DF`): letters (and underscores) with at most a few
    trailing digits, and few capitals when it mixes cases."""
    if not _SEGMENT.fullmatch(segment):
        return False
    upper = sum(c.isupper() for c in segment)
    return upper <= 6 or not any(c.islower() for c in segment)


def not_example(value: str) -> bool:
    return value not in KNOWN_EXAMPLES and "EXAMPLE" not in value.upper()


def plausible(value: str, after: str = "") -> bool:
    """A value that could be a real credential: not a reference, expression or placeholder."""
    v = unquote(value)
    if not v or v in KNOWN_EXAMPLES:
        return False
    if REFERENCE.search(v) or PLACEHOLDER.search(v) or expression(v, after):
        return False
    if len(v) >= 16 and len(set(v[-16:].lower())) <= 2:
        return False  # `glpat-0000...`, `sk-xxxx...`: a placeholder after a real prefix
    return not _NUMBERISH.fullmatch(v)  # numbers, versions, ports, dates


def random_enough(value: str, after: str = "") -> bool:
    """Keys and tokens: long, and mixed (digits or both cases or symbols)."""
    v = unquote(value)
    if len(v) < 12 or not plausible(v, after):
        return False
    if _WORDS.fullmatch(v) or _PATHLIKE.fullmatch(v) or _identifier(v):
        return False  # snake_case words, CONSTANT_NAMES, camelCase, dotted.names, paths
    return classes(v) >= 2 and len(set(v)) >= 6


def password_like(value: str, after: str = "") -> bool:
    """Passwords: anything plausible of 4+ characters (hunter2 is a password)."""
    v = unquote(value)
    return (
        len(v) >= 4
        and plausible(v, after)
        and not _snake_case(v)
        and not _TYPES.match(v)
        and not _SECRET_NAME.fullmatch(v)
    )


def tokenish(value: str, after: str = "") -> bool:
    """A key's or token's value: random enough, base64 credentials, or short but
    mixing three classes (`Orbit4310#`)."""
    v = unquote(value)
    if len(v) < 8 or not plausible(v, after):
        return False
    return random_enough(v, after) or base64_credentials(v) or classes(v) >= 3


def path_like(value: str) -> bool:
    """A file's path (`/run/secrets/x`, `~/.ssh/id_ed25519`): where a secret is, not it."""
    return _PATH.fullmatch(value) is not None


def strong_password(value: str, after: str = "") -> bool:
    """A password named only by prose (`the password is X`, netrc's `password X`): it
    must look chosen, not like the next word of a sentence: 6+ characters mixing a
    digit or symbol with letters, or both cases."""
    v = unquote(value).rstrip(".,;:)")
    if len(v) < 6 or "://" in v or not password_like(v, after) or _WORDS.fullmatch(v):
        return False
    has_letter = any(c.isalpha() for c in v)
    return has_letter and classes(v) >= 2 and not _PATHLIKE.fullmatch(v)


def base64_credentials(value: str) -> bool:
    """Base64 of `user:password` (Docker's `auth`, npm's `_auth`, HTTP Basic)."""
    import base64
    import binascii

    v = unquote(value)
    if len(v) < 8 or len(v) > 2048:
        return False
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    _, sep, pw = text.partition(":")
    return bool(sep) and len(pw) >= 3 and text.isprintable()


def _snake_case(v: str) -> bool:
    """Whether `v` is words joined by underscores (`[a-z]+_[a-z_]+`, without a regex)."""
    first = v.find("_")
    return first > 0 and first < len(v) - 1 and not v.strip(_SNAKE_CHARS)


_SNAKE_CHARS = "abcdefghijklmnopqrstuvwxyz_"
