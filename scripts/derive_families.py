"""Writes ways_sensors/redact/families.tsv (read by families.py): the provider families
masking knows by shape, derived from the gitleaks and Betterleaks rule catalogues (both
MIT; the notice is kept in ways_sensors/redact/NOTICE).

Usage: python scripts/derive_families.py GITLEAKS_TOML [BETTERLEAKS_TOML ...] (3.11+:
tomllib) (config/gitleaks.toml of github.com/gitleaks/gitleaks and config/betterleaks.toml of
github.com/betterleaks/betterleaks; the commits used are named in the output's header).

Kept: the rules a value is recognised by on its own, that is, whose every match starts
with one of a few known two-character openings (a vendor prefix). Dropped: the rules
anchored on a keyword beside the value (`adafruit ... = <32 chars>`: the keyword-anchored
generic detectors cover named contexts), the ones a bare value cannot be told by (hex of
a length, a host name), and the ones a structure detector already owns (curl, PEM keys,
JWTs, service-account JSON). Each kept regex is translated to what both Python's engine
and RE2 read: Go's mid-pattern `(?i)` becomes a scoped `(?i:...)`, every unbounded
repeat is bounded, `\\b` and the catalogue's consuming terminators become lookarounds
checked by the scan itself (shapes.py), and the result must have a bounded width.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

try:
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "ways_sensors/redact/families.tsv"
BOUND = 1024  # an unbounded repeat in a catalogue regex becomes {n,BOUND}
MAX_STARTS = 64  # more possible openings than this: not recognisable by a prefix
TERMINATORS = (
    r"""(?:[\x60'"\s;]|\\[nr]|$|\b)""",
    r"""(?:[\x60'"\s;]|\\[nr]|$)""",
    r"""(?:\\?['"\x60]|[\s;]|\\[nr]|$)""",
    r"""(?:[^\w-]|\z)""",
    r"""(?:[^\w\/+=-]|\z)""",
    r"""(?:[^a-zA-Z0-9_-]|$)""",
    r"""(?:[^A-Za-z0-9/+=]|$)""",
    r"""(?:[\/|\#|\?|:]|$)""",
)
# owned by another detector, or a value that is not a secret (a host, a URL, an id)
SKIP = re.compile(
    r"^(?:alibaba-access-key-id|authress|aws-amazon-bedrock-api-key-short|aiven|microsoft-teams|sidekiq|curl-|private-key|jwt|generic-|pkcs12|kubernetes|gcp-service-account|gcp-application"
    r"|artifactory-jfrog-url|salesforce-instance-url|supabase-project-url|snowflake-account-host"
    r"|tableau-server-host|azure-storage-account-name|azure-client-id|azure-tenant-id"
    r"|nuget-config|freemius|facebook-access-token|sourcegraph|ebay-client-id|aws-access-token"
    r"|github-|gitlab-pat$|gitlab-rrt|openai|anthropic|stripe|slack-(?:bot|user|legacy|app)"
    r"|sendgrid|twilio-api|google|gcp-api|age-secret|databricks|digitalocean|shopify|npm-"
    r"|pypi|vault-service|linear-api|huggingface|groq|xai|perplexity|replicate)"
)
KEYWORD_ANCHORED = re.compile(r"\(\?:=\|>\||\(\?:\.\|\[\\n\\r\]\)\{0,\d+\}\?|\(\?s:\.\{0,\d+\}\?\)")


def _scope_inline_flags(rx: str) -> str:
    """Go's `X(?i)Y`, where the flag holds to the end of the enclosing group, as `X(?i:Y)`."""
    while True:
        i = rx.find("(?i)", 1)
        if i < 0:
            return rx
        depth, j, in_class = 0, i + 4, False
        while j < len(rx):
            c = rx[j]
            if c == "\\":
                j += 2
                continue
            if in_class:
                in_class = c != "]"
            elif c == "[":
                in_class = True
                if rx[j + 1 : j + 2] == "]":
                    j += 1
            elif c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        rx = rx[:i] + "(?i:" + rx[i + 4 : j] + ")" + rx[j:]


def _bound_repeats(rx: str) -> str:
    out, i, in_class = [], 0, False
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            out.append(rx[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if rx[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if rx[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif c in "+*" and out and out[-1] not in ("(", "|"):
            out.append("{%d,%d}" % (1 if c == "+" else 0, BOUND))
        elif c == "{":
            m = re.match(r"\{(\d+),\}", rx[i:])
            if m:
                out.append("{%s,%d}" % (m.group(1), max(BOUND, int(m.group(1)) + BOUND)))
                i += m.end()
                continue
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def translate(rx: str) -> str:
    for t in TERMINATORS:
        rx = rx.replace(t, "")
    rx = rx.replace("[[:alnum:]]", "[A-Za-z0-9]").replace(r"\b", "").replace(r"\z", "")
    rx = rx.replace("(?:^|[^a-z0-9-])", "").replace("(?:$|[^a-z0-9-])", "")
    rx = re.sub(r"\(\?P<\w+>", "(?:", rx)
    return _bound_repeats(_scope_inline_flags(rx))


def _firsts(items: list, depth: int = 2) -> set[str] | None:
    """Every string of `depth` characters a match of the parsed items can start with,
    or None when there are too many to dispatch on (a class, a repeat from zero)."""
    if depth == 0:
        return {""}
    if not items:
        return {""}
    op, av = items[0]
    rest = items[1:]
    if op == sre_parse.LITERAL:
        heads = [chr(av)]
    elif op == sre_parse.IN:
        chars: list[str] = []
        for k, v in av:
            if k == sre_parse.LITERAL:
                chars.append(chr(v))
            elif k == sre_parse.RANGE and v[1] - v[0] < 8:
                chars += [chr(x) for x in range(v[0], v[1] + 1)]
            else:
                return None
        heads = chars
    elif op == sre_parse.SUBPATTERN:
        flags_on = av[1]
        inner = list(av[-1])
        got = _firsts(inner + rest, depth)
        if got is not None and flags_on & re.IGNORECASE:
            got = {v for g in got for v in _cases(g)}
        return got
    elif op == sre_parse.BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            got = _firsts(list(alt) + rest, depth)
            if got is None:
                return None
            out |= got
        return out
    elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
        lo, _hi, inner = av
        if lo < 1:
            return None
        return _firsts(list(inner) + [(op, (lo - 1, _hi, inner))] * (lo > 1) + rest, depth)
    elif op == sre_parse.AT:
        return _firsts(rest, depth)
    else:
        return None
    out = set()
    for h in heads:
        tails = _firsts(rest, depth - 1)
        if tails is None:
            return None
        out |= {h + t for t in tails}
        if len(out) > MAX_STARTS:
            return None
    return out


def _cases(s: str) -> set[str]:
    out = {""}
    for c in s:
        out = {o + v for o in out for v in {c.lower(), c.upper()}}
    return out


def starts(rx: str) -> set[str] | None:
    parsed = sre_parse.parse(rx)
    got = _firsts(list(parsed))
    if got is not None and parsed.state.flags & re.IGNORECASE:
        got = {v for g in got for v in _cases(g)}
    if got is None or len(got) > MAX_STARTS or any(len(s) < 2 for s in got):
        return None
    return got


def literal_prefix(rx: str) -> str:
    """The literal characters every match of `rx` starts with, lower-cased."""
    out: list[str] = []
    items = list(sre_parse.parse(rx))
    while items:
        op, av = items.pop(0)
        if op == sre_parse.LITERAL:
            out.append(chr(av))
        elif op == sre_parse.SUBPATTERN:
            items = list(av[-1]) + items
        else:
            break
    return "".join(out).lower()


def reach(rx: str) -> str:
    """How the scan finds a family: "" when a match is a run of [A-Za-z0-9_-], or runs
    joined by `.`, `:`, `~` or `!`, that the token-run pass meets (shapes.py walks back
    over those joints), else the literal needle it is searched by (needles.py): a body
    with `+`, `/` or `=` (base64), which cut runs short, a value that may be shorter than
    a run, or a prefix ending in `/` or a space."""
    body = re.sub(r"\{\d+(?:,\d+)?\}|\(\?[:i!=-]+", "", rx)
    short = sre_parse.parse(rx).getwidth()[0] < 21  # may be shorter than a token run
    cut = re.search(r"\+/|/\+|\\/|\\s|\[[^\]]*=[^\]]*\]", body)
    if short or cut or "/" in literal_prefix(rx):
        prefix = literal_prefix(rx)
        return prefix if len(prefix) >= 4 else ""
    return ""


def _boundary(rx: str) -> str:
    base64 = "+/" in rx or "/+" in rx or "\\+" in rx
    return rx + (r"(?![A-Za-z0-9_\-+/=])" if base64 else r"(?![A-Za-z0-9_\-])")


def main(paths: list[str]) -> None:
    rows: dict[str, tuple[str, str, str]] = {}  # by regex: both catalogues' shapes are kept
    for path in paths:
        for rule in tomllib.loads(Path(path).read_text())["rules"]:
            kind, source = rule["id"].split(".")[0], rule.get("regex", "")
            if not source or SKIP.match(kind) or KEYWORD_ANCHORED.search(source):
                continue
            rx = translate(source)
            try:
                re.compile(rx)
            except re.error as e:
                print(f"skip {kind}: {e}", file=sys.stderr)
                continue
            low, high = sre_parse.parse(rx).getwidth()
            opening = starts(rx)
            if opening is None or low < 16 or high > 32768:
                print(
                    f"skip {kind}: openings {opening and len(opening)}, width {low}",
                    file=sys.stderr,
                )
                continue
            if not re.compile(rx).groups:  # group 1 is the secret, as in shapes.py
                rx = "(" + rx[4:] + ")" if rx.startswith("(?i)") else "(" + rx + ")"
                rx = "(?i)" + rx if source.startswith("(?i)") else rx
            rows[_boundary(rx)] = (kind, " ".join(sorted(opening)), reach(rx))
    lines = [
        "# Provider families known by their shape, derived from the gitleaks and Betterleaks",
        "# rule catalogues (MIT; ways_sensors/redact/NOTICE) by scripts/derive_families.py",
        "# from gitleaks b58d3f1 and betterleaks 6381fa4: do not edit by hand.",
        "# kind, openings, needle, regex: tab-separated (families.py reads them)",
    ]
    for rx, (kind, opening, needle) in sorted(rows.items(), key=lambda r: (r[1], r[0])):
        lines.append("\t".join((kind, opening, needle, rx)))
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(rows)} families written to {OUT.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
