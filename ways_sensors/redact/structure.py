"""Secrets known by where they sit: URLs, command lines, and values assigned to secret names.

* URLs (`://`): the password of a userinfo (`scheme://user:pw@host`, `scheme://:pw@host`),
  and whole webhook URLs (Slack, Discord), whose path is the credential.
* Query and fragment parameters whose names are not secret words yet hold one
  (`appid=`, `sig=`, `X-Amz-Signature=`); keyvalue.py finds `?key=`, `&token=`,
  `#access_token=`, `password=` with every other assignment.
* Command lines: a short flag is a password only for the program that reads it so
  (`mysql -pX`, `redis-cli -a X`, `docker login -p X`, `sqlcmd -P X`, `ldapsearch -w X`,
  `curl -u user:X`); the program is the first word of the command the flag belongs to,
  found by reading back to the start of that command (a line, `|`, `;`, `&&`, with
  backslash continuations), at most a few hundred characters.
keyvalue.py finds the values assigned to names (`DB_PASSWORD=`, `"api_key": "..."`,
`--token X`, `<password>...</password>`, `name: X_TOKEN` / `value: ...`).
"""

from __future__ import annotations

from ..regex import Lazy
from . import values
from .scan import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# -- URLs -------------------------------------------------------------------------------
_USERINFO = Lazy(
    r"://(?P<user>[^\s:/@'\"<>]{0,128}):(?P<pw>[^\s/'\"<>]{1,256})@(?P<host>[A-Za-z0-9.\-\[\]_%]{1,253})"
)
_WEBHOOK = Lazy(
    r"https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,200}"
    r"|(?P<discord>(?:[a-z]{1,10}\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/"
    r"[A-Za-z0-9_\-]{60,70}))"
)


def detect_urls(ctx: Context) -> None:
    text = ctx.text
    if "://" not in text:
        return
    if "hooks.slack.com" in text or "/api/webhooks/" in text:
        for m in ctx.finditer(_WEBHOOK, False):
            ctx.tick()
            ctx.add(
                m.start(), m.end(), "discord-webhook" if m.group("discord") else "slack-webhook"
            )
    for m in ctx.finditer(_USERINFO, False):
        ctx.tick()
        pw, user = m.group("pw"), m.group("user")
        # a password may hold an unencoded `@`: the host follows the last one; a default
        # pair (guest:guest) is a documentation example, not a secret
        if values.password_like(pw) and not values.REFERENCE.search(user) and user != pw:
            ctx.add(m.start("pw"), m.end("pw"), "connection-string-password")


# -- query parameters -----------------------------------------------------------------------
# the names keyvalue.py does not know (it finds `?token=`, `&api_key=`, `password=`)
_QUERY = Lazy(
    r"[?&#;](?P<name>app_?id|sig|signature|x-amz-signature|x-goog-signature)"
    r"=(?P<value>[^&\s#'\"<>]{6,1024})"
)
_QUERY_NEEDLES = ("sig", "appid", "app_id")


def detect_query(ctx: Context) -> None:
    if not ctx.has(_QUERY_NEEDLES, True) or "=" not in ctx.text:
        return
    text = ctx.text
    for lo, hi in ctx.windows(_QUERY_NEEDLES, True, 32, 1100):
        _query_window(ctx, text, lo, hi)


def _query_window(ctx: Context, text: str, lo: int, hi: int) -> None:
    for m in ctx.finditer(_QUERY, True, lo, hi):
        ctx.tick()
        start, end = m.start("value"), m.end("value")
        value = text[start:end]
        if len(value) >= 16 and values.random_enough(value):  # signatures, app ids
            ctx.add(start, end, "url-query-secret")


# -- command lines ------------------------------------------------------------------------
# program -> {flag: how its value is given}: "attached" (`-pSECRET` only: `-p X` asks for
# the password and names a database), "value" (attached or the next word), "userpass"
# (`user:password`, the secret after the colon)
_MYSQL = {"-p": "attached"}
_LOGIN = {"-p": "value"}
PROGRAMS: dict[str, dict[str, str]] = {
    **dict.fromkeys(
        ("mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlsh"),
        _MYSQL,
    ),
    **dict.fromkeys(("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport"), _LOGIN),
    **dict.fromkeys(("mongoimport", "sshpass", "twine", "oc", "az"), _LOGIN),
    **dict.fromkeys(("docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras"), _LOGIN),
    "redis-cli": {"-a": "value"},
    "sqlcmd": {"-P": "value"},
    "bcp": {"-P": "value"},
    "zip": {"-P": "value"},
    "unzip": {"-P": "value"},
    "7z": {"-p": "attached"},
    "7za": {"-p": "attached"},
    **{p: {"-w": "value"} for p in ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete")},
    "curl": {"-u": "userpass", "--user": "userpass", "-U": "userpass", "--proxy-user": "userpass"},
}
# per flag, words one of which a command using it must contain (one `in` per text)
_FLAG_PROGRAMS = {
    "-p": ("mysql", "mariadb", "mongo", "login", "sshpass", "twine", "7z"),
    "-a": ("redis-cli",),
    "-P": ("sqlcmd", "bcp", "zip"),
    "-w": ("ldap",),
    "-u": ("curl",),
    "-U": ("curl",),
    "--user": ("curl",),
    "--proxy-user": ("curl",),
}
_NEEDS_LOGIN = frozenset(
    {"docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "oc", "az"}
)
_FLAG = Lazy(
    r" -(?:(?P<short>[pPauUw])|-(?P<long>(?:proxy-)?user)(?=[ \t=])"
    r"|-?(?P<named>[a-z0-9][a-z0-9-]{0,40})(?![a-z0-9-])"
    r"(?:(?<=token)|(?<=key)|(?<=secret)|(?<=pass)|(?<=passwd)|(?<=password)|(?<=pwd))"
    r"(?=[ \t]))"
)
_NAMED_PASSWORD = ("secret", "password", "passwd", "pass", "pwd")
# a shell word: bare, quoted, or both run together (`user:'pa ss'`)
_WORD = Lazy(r"(?:\"[^\"\n]{0,256}\"|'[^'\n]{0,256}'|[^\s\"']{1,256}){1,4}")
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "then", "do", "!"})
_COMMAND_BACK = 600


def _command_start(text: str, i: int) -> int | None:
    """Where the command holding position i starts, or None when that is more than
    _COMMAND_BACK characters back (its program is then unknown)."""
    lo = max(0, i - _COMMAND_BACK)
    j = i
    while True:
        nl = text.rfind("\n", lo, j)
        if nl > lo and text[nl - 1] == "\\":  # a continued line: keep reading back
            j = nl - 1
            continue
        if nl < 0 and lo > 0:
            return None
        start = nl + 1 if nl >= 0 else 0
        break
    for sep in ("|", ";", "&&", "`", "$("):
        k = text.rfind(sep, start, i)
        if k >= 0:
            start = max(start, k + len(sep))
    return start


def _program(text: str, start: int, i: int) -> str | None:
    """The program of the command text[start:i]: its first word that is not a prompt,
    an assignment or a wrapper (`sudo`, `env`), without its folder."""
    words = text[start:i].split()
    k = 0
    while k < len(words):
        w = words[k]
        wrapper = w in _PREFIXES or w.endswith(("$", "#", ">"))
        assignment = "=" in w and not w.startswith("-")
        sudo_flag = w.startswith("-") and k > 0 and words[k - 1] == "sudo"
        if not (wrapper or assignment or sudo_flag):
            break
        k += 1
    if k >= len(words):
        return None
    prog = words[k].strip("\"'").rsplit("/", 1)[-1]
    if prog not in PROGRAMS:
        return None
    if prog in _NEEDS_LOGIN:
        rest = [w for w in words[k + 1 :] if not w.startswith("-")]
        if "login" not in rest[:3]:
            return None
    return prog


def _value_after(text: str, pos: int, end: int) -> tuple[int, int] | None:
    """The next word after a flag (its inside when quoted), within the command."""
    while pos < end and text[pos] in " \t":
        pos += 1
    m = _WORD.match(text, pos, end)
    if not m or m.end() == pos:
        return None
    s, e = m.span()
    q = text[s]
    if q in "\"'" and e - s >= 2 and text[e - 1] == q and q not in text[s + 1 : e - 1]:
        return s + 1, e - 1  # one quoted word: its inside
    return s, e


def detect_cli(ctx: Context) -> None:
    text = ctx.text
    if " -" not in text:
        return
    seen: dict[int, str | None] = {}
    relevant: dict[str, bool] = {}  # whether any program reading this flag is named at all
    for m in ctx.finditer(_FLAG, False):
        if m.group("named"):
            _named_flag(ctx, m)
            continue
        flag = "-" + m.group("short") if m.group("short") else "--" + m.group("long")
        if flag not in relevant:
            relevant[flag] = any(name in text for name in _FLAG_PROGRAMS[flag])
        if not relevant[flag]:
            ctx.tick()
            continue
        start = _command_start(text, m.start() + 1)
        ctx.tick(m.start() - start if start is not None else _COMMAND_BACK)
        if start is None:
            continue
        if start not in seen:
            seen[start] = _program(text, start, m.start() + 1)
        how = PROGRAMS.get(seen[start] or "", {}).get(flag)
        if how is None:
            continue
        after = m.end()
        line_end = text.find("\n", after, after + 512)
        end = line_end if line_end >= 0 else min(ctx.n, after + 512)
        nxt = text[after : after + 1]
        if nxt in ("", "\n", "\r"):
            continue
        if nxt in " \t=":
            if how == "attached":
                continue  # `mysql -p shop`: a prompt, then a database
            span = _value_after(text, after + (nxt == "="), end)
        else:
            span = _value_after(text, after, end)
        if span is None or text.startswith("-", span[0]):
            continue
        if how == "userpass":
            _add_userpass(ctx, *span)
        else:
            _add_password(ctx, *span)


def _named_flag(ctx: Context, m: re.Match[str]) -> None:
    """`--api-key X`, `--token X`, `--client-secret X`, `-storepass X`: any program's
    flag named like a credential, with its value in the next word."""
    ctx.tick()
    text, name = ctx.text, m.group("named")
    end = text.find("\n", m.end(), m.end() + 512)
    span = _value_after(text, m.end(), end if end >= 0 else min(ctx.n, m.end() + 512))
    if span is None or text.startswith("-", span[0]):
        return
    value = text[span[0] : span[1]]
    if values.path_like(value):
        return
    password = name.endswith(_NAMED_PASSWORD)
    if values.strong_password(value) if password else values.tokenish(value):
        ctx.add(span[0], span[1], "cli-password")


def _add_userpass(ctx: Context, start: int, end: int) -> None:
    """`user:password`, `:password`, `user:'password'`: the part after the first colon."""
    word = ctx.text[start:end]
    colon = word.find(":")
    user = word[:colon].strip("\"'")
    if colon < 0 or values.REFERENCE.search(user) or user == word[colon + 1 :].strip("\"'"):
        return  # a reference, or a default pair (test:test, admin:admin) only demos use
    s, e = start + colon + 1, end
    if ctx.text[s : s + 1] in ("'", '"') and ctx.text[e - 1 : e] == ctx.text[s]:
        s, e = s + 1, e - 1
    _add_password(ctx, s, e)


def _add_password(ctx: Context, start: int, end: int) -> None:
    value = ctx.text[start:end]
    if values.password_like(value):
        ctx.add(start, end, "cli-password")
