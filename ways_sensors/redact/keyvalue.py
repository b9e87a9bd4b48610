"""Values assigned to names that say secret, in every format a tool output uses.

One regex per name word (`pass`, `pwd`, `secret`, `credential`, `token`, `key`, `auth`),
each starting with its word so Python's engine jumps from one occurrence to the next
(compiled on first use); the text searched is the ASCII-folded copy, so `DB_PASSWORD`,
`dbPassword` and `db_password` are one word. After the word, one of these forms:

    name = value | name: value | name := value | name => value | "name": "value"
    name "value";                          (detect-secrets' quotes-and-semicolon form)
    <name>value</name>                     (XML, Maven's settings.xml)
    name: X_TOKEN / value: v               (Kubernetes env, on the next line)
    {"name": "X_TOKEN", "value": "v"}      (ECS), ParameterKey=X,ParameterValue=v (AWS)
    --name value | -name value             (a command's flag)
    password X | password is X             (netrc, prose: the value must look chosen)
    Authorization: <scheme> value          (HTTP headers, with or without a scheme)

A bare value that is plainly code (`os.getenv(...)`, `request.headers.get(`, `this.x`,
`True`, `f"..."`) is refused inside the regex. Then the whole name is read back from
the word (at most 64 characters): a word glued to lower-case letters must be a known
compound (`apikey`, `dbpass`; not `monkey`, `bypass`), and names of lookups and limits
(`sort_key`, `nextPageToken`, `max_tokens`, `public_key`) are not secret names. The
value is judged by values.py (a path such as `PWD=/home/x` is where a secret is, not one).
"""

from __future__ import annotations

from .. import regex as rx
from ..regex import Lazy
from . import values
from .scan import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

_WORD_FORMS = {
    "pass": "pass(?:word|wd|phrase)?",
    "pwd": "pwd",
    "secret": "secret",
    "credential": "credentials?",
    "token": "token",
    "key": "key",
    "auth": "auth(?:orization)?",
}
_PASSWORD_WORDS = frozenset({"pass", "pwd", "secret", "credential"})
_SCHEME = r"(?:(?P<scheme>bearer|basic|token|api-token|apikey|bot|digest)[ \t]{1,4})?"
_TEMPLATE = (
    r"(?P<w>{w})(?:s|_?base|_?value|_?b64|_?hex|\d)?"
    # what can follow a name: a quote or bracket closing it, an operator, a line end, or
    # blanks and then an operator, a quote, `value`, or a word with a digit or symbol
    r"(?=[\"'`\]=,\r\n>@\[;]|:(?![ \t]{0,8}(?:\r?\n|\Z))|\+=|[ \t]{1,8}(?:[:=+>\"'\[vp]{is}"
    r"|[^\s\"'=]{0,60}?[0-9!#$%^&*+~@?]))"
    r"(?P<close>[\"'`\]]{0,2}|[ \t]\[[^\]\n]{0,20}\])"
    r"(?:"
    r"[ \t]{0,8}(?P<op>:=|=>|==|\+=|=|:)[ \t]{0,8}@?{scheme}"
    r"|(?P<nv>[ \t]{0,4}(?:,[ \t]{0,4}|\r?\n[ \t]{0,40}(?:-[ \t]{1,4})?|[ \t]{1,4})[\"']?"
    r"(?:parameter)?value[\"']?[ \t]{0,4}[:=][ \t]{0,4})"
    r"|(?P<xml>>)(?=[^<\n]{1,400}</)"
    r"|(?P<sq>[ \t]{1,4})(?=(?P<sqq>[\"'])[^\"'\n]{1,400}(?P=sqq)[ \t]{0,4};)"
    r"{sp}"
    r")"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,400})(?P=q)(?P<semi>[ \t]{0,4};)?"
    r"|(?!{code})(?P<bv>[^\s\"'`<>,;]{1,400}))"
)
# A bare value that is plainly code, refused inside the regex (no match is built for
# it): a call or an index closed on its line (or continued on the next), an attribute
# path, a literal, a string literal's prefix (f"...", b'...'). Lower case: the regex
# runs on the folded text.
_IDENT = r"[a-z_$][\w$]{0,64}"
_CODE = (
    rf"{_IDENT}(?:(?:\.|::|->){_IDENT}){{0,8}}"
    r"(?:\((?=[^\n]{0,300}\)|[^\n]{0,300}[,(\[][ \t]{0,8}(?:\r?\n|\Z))|\[(?=[^\n]{0,300}\]))"
    rf"|[a-z_$]{{1,64}}\.[a-z_$][\w$]{{0,64}}(?:\.{_IDENT}){{0,8}}(?![\w$.\-/+=])"
    r"|(?:none|true|false|null|nil|undefined)(?![\w$.\-])|\d{1,20}(?![\w.\-])"
    r"|[a-z]{1,2}[\"']"
)
# a flag's or a sentence's next word, holding a digit or symbol and no `=`
_SPACED = r"|(?P<sp>[ \t]{1,3}(?:is[ \t]{1,3})?)(?=[\"']?[^\s\"'=]{0,60}?[0-9!#$%^&*+~@?])"


def regex(word: str) -> re.Pattern[str]:
    """The regex of one name word, compiled on first use (a record without the word never
    pays for it: the blocking hook imports this module for one record)."""
    got = _BY_WORD.get(word)
    if got is None:
        got = _BY_WORD[word] = rx.compile(
            _TEMPLATE.replace("{w}", _WORD_FORMS[word])
            .replace("{scheme}", _SCHEME if word == "auth" else "")
            .replace("{sp}", _SPACED if word in _PASSWORD_WORDS else "")
            .replace("{code}", _CODE)
            .replace("{is}", r"|is[ \t]" if word in _PASSWORD_WORDS else "")
        )
    return got


_BY_WORD: dict[str, re.Pattern[str]] = {}  # one per word of _WORD_FORMS, made once


WORDS = tuple(_WORD_FORMS)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# a word glued to lower-case letters before it is a secret name only in these compounds
_GLUED = {
    "key": r"api|secret|private|access|account|auth|master|signing|client|app|service|"
    r"session|encryption|license|subscription|shared|sharedaccess|hmac|webhook|sign|pass",
    "token": r"auth|access|refresh|id|api|bot|bearer|session|oauth|personal|private|secret|"
    r"service|deploy|registration|npm|app|jwt|user|admin|github|gitlab|slack|hf|x",
    "pass": r"db|root|admin|user|key|store|srcstore|deststore|src|dest|my|app|mysql|redis|"
    r"smtp|mail|ftp|ldap|bind|master|new|old|vnc|http|proxy|sa|sys|web|wifi|wp|ssh|x|pg",
    "pwd": r"db|root|admin|user|mysql|sa|my|app|x|pg|sys|bind",
    "secret": r"client|app|api|jwt|session|webhook|shared|consumer|signing|cookie|master|"
    r"oauth|aws|private|access|x|db",
    "credential": r"aws|db|service|app|client|x",
    "auth": r"basic|http|proxy|redis|x|npm|_",
}
_GLUED_RX = {w: Lazy(rf"(?:{alts})$") for w, alts in _GLUED.items()}
_LOOKUP = Lazy(
    r"(?:next|page|continuation|cancel(?:lation)?|sync|resume|sort|primary|partition|cache|"
    r"foreign|group|idempotency|dedup|lookup|hash|range|routing|shard|index|unique|object|"
    r"public|pub|row|i18n|translation|message|max|min|num|total|input|output|prompt|"
    r"completion|csrf|xsrf|sequence|seq|event|gpg|ssh|host|known|sorting|field|json|map|"
    r"dict|tab|hot|short|parameter|attribute|column|property|prop|label|tag|header)[_.\-]?$"
)
_SCHEMES = frozenset({"bearer", "basic", "token", "api-token", "apikey", "bot", "digest"})
_PROSE_NAMES = ("password", "passwd", "passphrase")  # `pass X` is a verb, not netrc
_PIECES = Lazy(r"[_.\-]")  # of a name: `db_pass` -> `db`, `pass`
_ANNOTATION = Lazy(r"[ \t]{0,8}(?:=[^=]|\||,|\)|\[)")
_NEXT_PARAM = Lazy(r"&[A-Za-z_][\w.\-]{0,40}=")


def _name(ctx: Context, kw_start: int, kw_end: int) -> tuple[str, int]:
    """The whole name the word ends (`DB_PASSWORD` for `PASSWORD`) and where it starts."""
    text, i = ctx.text, kw_start
    lo = max(0, kw_start - 64)
    while i > lo and text[i - 1] in _NAME_CHARS:
        i -= 1
    return text[i:kw_end], i


def _secret_name(word: str, name: str, name_start: int, kw_start: int, ctx: Context) -> bool:
    """Whether the name says secret: not a glued word (`monkey`) or a lookup (`sort_key`)."""
    text = ctx.text
    stem = text[name_start:kw_start].lower()
    before = text[kw_start - 1] if kw_start > name_start else ""
    camel = before.islower() and text[kw_start].isupper()  # apiKey, dbPassword
    if before.isalpha() and not camel:
        part = _PIECES.split(stem)[-1]
        if not _GLUED_RX[word].search(part):
            return False
    return not (word in ("token", "key") and _LOOKUP.search(stem))


def _line_start(text: str, i: int) -> bool:
    """Whether only blanks or a list dash precede position i on its line."""
    lo = max(0, i - 200)
    j = text.rfind("\n", lo, i)
    if j < 0 and lo > 0:
        return False
    return not text[j + 1 : i].strip(" \t-")


def _judge(
    ctx: Context, m: re.Match[str], word: str, name: str, name_start: int
) -> tuple[str, int, int] | None:
    """The kind to mask the value as and its span, or None when it is not a secret."""
    text = ctx.text
    quoted = m.group("qv") is not None
    vs, ve = m.span("qv") if quoted else m.span("bv")
    value = text[vs:ve]
    if not quoted:
        while value and (
            value[-1] in ":."
            or (
                value[-1] in ")]}"
                and value.count(value[-1]) > value.count({")": "(", "]": "[", "}": "{"}[value[-1]])
            )
        ):
            value, ve = value[:-1], ve - 1
    after = text[ve : min(ctx.n, ve + 200)].split("\n", 1)[0]
    if not quoted:
        cut = _NEXT_PARAM.search(value)  # `?token=abc&page=2`: the value ends at `&`
        if cut:
            value, ve = value[: cut.start()], vs + cut.start()
    if not value or values.path_like(value):
        return None
    flag = name.startswith("-")
    password_type = word in _PASSWORD_WORDS
    if m.re.groupindex.get("sp") and m.group("sp") is not None and not (quoted and m.group("semi")):
        if m.group("close") and not flag:
            return None  # `[PASSWORD] http://...`: a placeholder, then the next word
        if flag:
            ok = values.strong_password(value) if password_type else values.tokenish(value)
            return ("cli-password", vs, ve) if ok and not value.startswith("-") else None
        if (
            name.lower().endswith(_PROSE_NAMES)
            and "=" not in value
            and values.strong_password(value, after)
        ):
            return ("prose-password", vs, ve)
        return None
    op = m.group("op")
    header = word == "auth" and name.lower().endswith("authorization")
    if header:
        scheme = (m.group("scheme") or "").lower()
        first, _, rest = value.partition(" ")
        if rest and first.lower() in _SCHEMES:  # a quoted "Basic <credentials>"
            scheme, value, vs = first.lower(), rest.strip(), vs + len(first) + 1
            vs += len(rest) - len(rest.lstrip())
        if not (values.random_enough(value, after) or values.base64_credentials(value)):
            return None
        return ("basic-auth-header" if scheme == "basic" else "bearer-token", vs, ve)
    if op == ":" and not quoted and m.group("nv") is None:
        # a bare `name: value`: YAML (the name begins its line, the colon follows it),
        # an HTTP header, or prose; never an annotation (`password: bool = False`)
        if _ANNOTATION.match(after) or text[m.start("op") - 1] in " \t":
            return None
        yaml = _line_start(text, name_start)
        quoted_name = text[name_start - 1 : name_start] in ("'", '"')  # -H "Token: ..."
        header = word in ("key", "token") and ("-" in name or quoted_name)
        if not (yaml or header) and not (password_type and values.strong_password(value, after)):
            return None
    if word == "auth":
        ok = (
            values.base64_credentials(value)
            or values.random_enough(value, after)
            or (name.isupper() and values.password_like(value, after))
        )
    elif password_type:
        ok = values.password_like(value, after)
    else:
        ok = values.tokenish(value, after)
        if ok and name.lower().lstrip("-") == "key":
            ok = "/" not in value and len(value) >= 16
    if not ok:
        return None
    return (_kind(ctx, m, word, name, name_start, value, quoted), vs, ve)


def _kind(
    ctx: Context, m: re.Match[str], word: str, name: str, at: int, value: str, quoted: bool
) -> str:
    low = name.lower().replace("_", "").replace("-", "")
    op = m.group("op")
    if low.endswith(("accountkey", "sharedaccesskey")):
        return "azure-storage-key"
    if "aws" in low and len(value) == 40:
        return "aws-secret-access-key"
    if name.startswith("-"):
        return "cli-password"
    if at and ctx.text[at - 1] in "?&#" and op == "=":
        return "url-query-secret"
    if op == ":" and "-" in name and not quoted and word in ("key", "token"):
        return "api-key-header"
    if op == "=" and name.isupper() and ctx.text[m.start("op") - 1 : m.start("op")] != " ":
        return "env-assignment"
    return "secret-field"


def detect(ctx: Context) -> None:
    folded = ctx.folded
    for word in WORDS:
        if word not in folded:
            continue
        for m in ctx.finditer(regex(word), True):
            kw_start = m.start()
            name, name_start = _name(ctx, kw_start, m.end("w"))
            ctx.tick(kw_start - name_start)
            if m.group("xml") is not None and not ctx.text.startswith("<", name_start - 1):
                continue
            if not _secret_name(word, name, name_start, kw_start, ctx):
                continue
            found = _judge(ctx, m, word, name, name_start)
            if found is not None:
                ctx.add(found[1], found[2], found[0])


_BEARER = Lazy(r"bearer[ \t]{1,4}(?P<v>[a-z0-9_\-.~+/]{16,4096}={0,3})(?![a-z0-9_\-.~+/=])")


def detect_bearer(ctx: Context) -> None:
    if "bearer" not in ctx.folded:
        return
    for m in ctx.finditer(_BEARER, True):
        ctx.tick()
        if values.random_enough(ctx.text[m.start("v") : m.end("v")]):
            ctx.add(m.start("v"), m.end("v"), "bearer-token")
