"""The catalogue families (issue 40): each masked whole wherever it stands, from the
catalogues' own examples and from values drawn from its shape; placeholders, references
and Secrets Manager ARNs left alone.

tests/corpus/catalogue_examples.jsonl holds the literal true positives of the gitleaks
and Betterleaks rule tests (MIT; ways_sensors/redact/NOTICE) for the families kept, as
scripts/derive_families.py names them; values drawn from a shape come from
tests/shapegen.py, seeded per family.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ways_sensors import redact
from ways_sensors.redact import families, needles, shapes

from .shapegen import sample, secret_of

HERE = Path(__file__).resolve().parent
EXAMPLES = [
    json.loads(line)
    for line in (HERE / "corpus/catalogue_examples.jsonl").read_text().splitlines()
    if line
]
FAMILIES = sorted(
    {(k, r) for k, _, _, r in families.TABLE} | {(n.kind, n.regex.source) for n in needles._HAND}
)
LINES = (
    "export SERVICE_CREDENTIAL={v}",
    "2026-12-06T04:11:09Z INFO client ready with {v} (retries=3)",
    "const key = process.env.SERVICE_KEY || '{v}';",
    '{{"auth": "{v}"}}',
)


@pytest.fixture(autouse=True)
def own_state_root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def readable(secret: str, text: str, size: int = 12) -> bool:
    """Whether a piece of `size` characters of `secret` (all of it, if shorter) is in text."""
    if len(secret) <= size:
        return secret in text
    return any(secret[i : i + size] in text for i in range(len(secret) - size + 1))


def _regexes(kind: str) -> list[str]:
    return [r for k, r in FAMILIES if k == kind] + [
        s.regex.pattern for s in shapes.SHAPES if s.kind == kind
    ]


@pytest.mark.parametrize("row", EXAMPLES, ids=lambda r: r["rule"])
def test_the_catalogues_examples_are_masked(row):
    found = [
        m.group(1) if m.re.groups else m.group(0)
        for rx in _regexes(row["rule"])
        for m in re.finditer(rx, row["text"])
    ]
    assert found, "the example no longer fits its family's shape"
    masked, _ = redact.mask_text(row["text"])
    for secret in found:
        if "EXAMPLE" in secret.upper():  # a documented example is not a secret
            assert secret in masked
        else:
            assert not readable(secret, masked), masked


@pytest.mark.parametrize(("kind", "rx"), FAMILIES, ids=lambda x: x[:40])
def test_a_value_of_every_family_is_masked_whole_on_any_line(kind, rx):
    r = random.Random(kind + rx)
    for line in LINES:
        value = sample(rx, r)
        secret = secret_of(rx, value)
        private = secret.removeprefix(_prefix(rx))  # a vendor's prefix is public
        masked, found = redact.mask_text(line.format(v=value))
        assert not readable(private, masked, 16), (line, masked)
        assert found, masked


def _prefix(rx: str) -> str:
    m = re.match(r"\(?(?:\(\?i\))?\(?([A-Za-z0-9_\-]{3,})", rx.replace("\\.", "."))
    return m.group(1) if m else ""


@pytest.mark.parametrize("prefix", sorted({_prefix(r) for _, r in FAMILIES} - {""}))
@pytest.mark.parametrize("body", ["X" * 40, "x" * 64, "0" * 48, "*" * 40])
def test_a_prefix_with_a_placeholder_body_is_left_alone(prefix, body):
    for line in (f"token: {prefix}{body}", f"export API_TOKEN={prefix}{body}"):
        assert redact.mask_text(line) == (line, []), line


@pytest.mark.parametrize(
    "line",
    [
        "aws secretsmanager get-secret-value --secret-id "
        "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-password-Ab12Cd",
        'SecretArn: "arn:aws:secretsmanager:us-east-1:210987654321:secret:api-token-Qw3Rt9"',
        "valueFrom: arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:app/key-9xYz0A",
        "export GITHUB_TOKEN=${GITHUB_TOKEN}",
        "api_key: <your-api-key>",
        "NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
    ],
)
def test_references_and_secret_arns_are_left_alone(line):
    assert redact.mask_text(line) == (line, [])


def test_a_secret_beside_an_arn_is_still_masked():
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-password-Ab12Cd"
    line = f"--secret-id {arn} --token ghp_{'aB3dE5fG7h' * 3}xYz123"
    masked, _found = redact.mask_text(line)
    assert arn in masked and "ghp_" not in masked, masked


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (  # a base64 body: cut at its first + or / before, a tail left readable
            "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + ("ab+cD/ef" * 40),
            "ops_eyJ" + ("ab+cD/ef" * 40),
        ),
        ("GRAFANA=glc_" + "Zm9v+YmFy/" * 8 + "==", "glc_" + "Zm9v+YmFy/" * 8 + "=="),
        (
            "docker swarm unlock-key SWMKEY-1-" + "Qx+7aBcD9eFgH1jK/LmN2pQ" * 2,
            "SWMKEY-1-" + "Qx+7aBcD9eFgH1jK/LmN2pQ" * 2,
        ),
        (  # the id before .atlasv1. is part of the token
            "token = aB3dE5fG7hJ9kL.atlasv1." + "Zq4vB7nK2mXc9LpQ1rSt" * 3 + "ab",
            "aB3dE5fG7hJ9kL.atlasv1." + "Zq4vB7nK2mXc9LpQ1rSt" * 3 + "ab",
        ),
    ],
)
def test_whole_values_are_masked_not_pieces(text, secret):
    masked, found = redact.mask_text(text)
    assert not readable(secret, masked, 8), masked
    assert len(found) == 1, found


def test_a_blocking_hook_finds_what_the_dispatcher_finds(tmp_path):
    """A light process (regex.light(): a blocking hook) searches needles with str.find,
    the dispatcher with RE2's automaton: the same spans on every corpus line, long and
    short (run in a child: light mode is for the whole process)."""
    lines = [
        line.format(v=sample(rx, random.Random(kind)))
        for kind, rx in FAMILIES
        for line in LINES[:2]
    ]
    lines.append(" filler " * 400 + " ".join(lines))  # over 2 KB: the automaton's side
    data = tmp_path / "lines.json"
    data.write_text(json.dumps(lines))
    code = (
        "import json, sys\n"
        "from ways_sensors import regex\n"
        "if sys.argv[2] == 'light': regex.light()\n"
        "from ways_sensors.redact import SCAN\n"
        "lines = json.load(open(sys.argv[1]))\n"
        "print(json.dumps([SCAN.find(t) for t in lines]))\n"
    )
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "XDG_CACHE_HOME": str(tmp_path / "c"),
    }
    got = {
        mode: json.loads(
            subprocess.run(
                [sys.executable, "-c", code, str(data), mode],
                capture_output=True,
                env=env,
                check=True,
            ).stdout
        )
        for mode in ("light", "full")
    }
    assert got["light"] == got["full"]
    assert sum(map(len, got["full"])) >= len(lines) - 1  # and they found something
