"""The held-out corpus of issue 40: secrets of every catalogue family in 14 kinds of
line, and look-alike lines that must come through unchanged. Deterministic (seeded).

Secrets: each family's value is drawn from its documented shape (tests/shapegen.py on
the regex: the catalogue rows of ways_sensors/redact/families.py, the needles' own
shapes, and the provider shapes the scan had before), never copied from a catalogue's
examples, and placed in seven named contexts (a variable, a flag, a header, a key in
JSON or YAML) and seven unnamed ones (a log line, prose, a literal in code,
`process.env.X || '...'`, a list item, a command's argument, inline code).
Look-alikes: per family, its prefix with a placeholder body (`ghp_XXXX...`), references
(`${X}`, `<your-token>`, `{{ secrets.X }}`), Secrets Manager ARNs, hashes, ids, digests,
base64 that is not a credential, dated file names and paths.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from shapegen import sample, secret_of  # noqa: E402

SEED = 20261206
NAMED = (
    "export {NAME}={v}",
    '{NAME}="{v}"',
    '{{"{name}": "{v}", "region": "eu-west-1"}}',
    "deploy --{flag} {v} --verbose",
    "Authorization: Bearer {v}",
    "  {name}: {v}",
    "const {camel} = '{v}';",
)
UNNAMED = (
    "2026-12-06T04:11:09Z INFO client ready with {v} (retries=3)",
    "here is the one I use, {v} - it works on staging",
    'client = Client("{v}")',
    "const key = process.env.SERVICE_KEY || '{v}';",
    "- {v}",
    "tool login {v}",
    "paste `{v}` into the box",
)


def _names(kind: str) -> dict[str, str]:
    words = kind.replace("-", "_").split("_")
    name = "_".join([*words[:2], "token" if "token" not in words else "key"])
    return {
        "NAME": name.upper(),
        "name": name.lower(),
        "flag": name.lower().replace("_", "-"),
        "camel": words[0] + "".join(w.title() for w in words[1:2]) + "Token",
    }


def families() -> list[tuple[str, str]]:
    """(kind, regex) of every family, one regex per distinct shape."""
    from ways_sensors.redact import families as table
    from ways_sensors.redact import needles, shapes

    out = [(k, r) for k, _, _, r in table.TABLE]
    out += [(n.kind, n.regex.source) for n in needles._HAND]
    seen = {r for _, r in out}
    out += [
        (s.kind, s.regex.pattern) for s in shapes.SHAPES if s.mask and s.regex.pattern not in seen
    ]
    return out


def secrets() -> list[dict[str, str]]:
    r = random.Random(SEED)
    rows = []
    for kind, rx in families():
        for i, line in enumerate(NAMED + UNNAMED):
            try:
                value = sample(rx, r)
            except ValueError:
                continue
            secret = secret_of(rx, value)
            public = _prefix(rx)  # a vendor's prefix is not secret: only the rest is scored
            private = secret[len(public) :] if secret.startswith(public) else secret
            if len(set(private)) < 6:
                continue  # a fixed literal (a prefix only): nothing secret to find
            rows.append(
                {
                    "family": kind,
                    "context": "named" if i < len(NAMED) else "unnamed",
                    "text": line.format(v=value, **_names(kind)),
                    "secret": secret,
                    "private": private,
                }
            )
    return rows


def _prefix(rx: str) -> str:
    from shapegen import sre_parse

    out = []
    items = list(sre_parse.parse(rx))
    if items and items[0][0] == sre_parse.SUBPATTERN:  # the secret's group
        items = list(items[0][1][-1]) + items[1:]
    for op, av in items:
        if op == sre_parse.LITERAL:
            out.append(chr(av))
        elif op == sre_parse.SUBPATTERN and all(o == sre_parse.LITERAL for o, _ in av[-1]):
            out += [chr(a) for _, a in av[-1]]
        else:
            break
    return "".join(out)


def lookalikes() -> list[dict[str, str]]:
    r = random.Random(SEED + 1)
    rows: list[dict[str, str]] = []

    def add(family: str, text: str) -> None:
        rows.append({"family": family, "text": text})

    for kind, rx in families():
        p = _prefix(rx)
        if len(p) >= 3:
            add("placeholder", f"{_names(kind)['NAME']}={p}{r.choice('Xx*0') * 40}")
    for _ in range(60):
        name = r.choice(["GITHUB_TOKEN", "NPM_TOKEN", "API_KEY", "DB_PASSWORD", "SLACK_TOKEN"])
        add(
            "reference",
            r.choice(
                [
                    f"export {name}=${{{name}}}",
                    f"{name.lower()}: <your-{name.lower().replace('_', '-')}>",
                    f"{name}: ${{{{ secrets.{name} }}}}",
                    f'token = os.environ["{name}"]',
                    f"const t = process.env.{name};",
                ]
            ),
        )
    for _ in range(60):
        region = r.choice(["us-east-1", "eu-west-1", "ap-southeast-2"])
        name = r.choice(
            ["prod/db-password", "staging/api-key", "app/secret-token", "rds!cluster-1"]
        )
        suffix = "".join(r.choice(string.ascii_letters) for _ in range(6))
        arn = (
            f"arn:aws:secretsmanager:{region}:{r.randrange(10**11, 10**12)}:secret:{name}-{suffix}"
        )
        add(
            "secret-arn",
            r.choice(
                [
                    f"aws secretsmanager get-secret-value --secret-id {arn}",
                    f'  SecretArn: "{arn}"',
                    f"valueFrom: {arn}",
                    f'{{"ARN": "{arn}", "Name": "{name}"}}',
                ]
            ),
        )
    for i in range(300):
        blob = bytes(r.getrandbits(8) for _ in range(48))
        digest = hashlib.sha256(blob).hexdigest()
        add(
            "hash-or-id",
            r.choice(
                [
                    f"commit {hashlib.sha1(blob).hexdigest()} Merge pull request #{i}",
                    f"{digest}  dist/app-{i}.tar.gz",
                    f"image: ghcr.io/acme/api@sha256:{digest}",
                    f'"integrity": "sha512-{base64.b64encode(blob + blob[:16]).decode()}"',
                    f"request_id={uuid.UUID(int=r.getrandbits(128))} status=200",
                    f"rollout-2026-11-30T00-59-34-{uuid.UUID(int=r.getrandbits(128))}.jsonl",
                    f"/home/dev/.cache/pip/wheels/{digest[:2]}/{digest[2:40]}/pkg-1.{i}.whl",
                    f"https://github.com/acme/api/blob/{hashlib.sha1(blob).hexdigest()}/src/main.py",
                    f'ETag: "{hashlib.md5(blob).hexdigest()}"',
                    f"msg_{base64.b32encode(blob[:15]).decode().lower()} delivered",
                ]
            ),
        )
    words = "the build passed after we rotated keys and cleaned caches on every runner"
    words = words.split(" ")
    for _ in range(100):
        add("prose", " ".join(r.choice(words) for _ in range(14)))
    return rows
