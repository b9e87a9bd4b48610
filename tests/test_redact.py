"""Secret masking: every kind positive and negative, the corpus figures, tokens and keys."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ways_sensors import redact

CORPUS = Path(__file__).resolve().parent / "corpus"
A36 = "Zq4vB7nK2mXc9LpQ1rSt5UwYaD3eF6gH8jKl"

# kind -> (text holding the secret, the secret, a near miss that must stay as it is)
CASES = {
    "private-key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + "A" * 60 + "\n-----END RSA PRIVATE KEY-----",
        "MIIEow" + "A" * 60,
        "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
    ),
    "age-secret-key": (
        "AGE-SECRET-KEY-1" + "QZ" * 29,
        "AGE-SECRET-KEY-1" + "QZ" * 29,
        "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
    ),
    "aws-access-key-id": (
        "key AKIA2E7A3F3BZZ4CQQ56 here",
        "AKIA2E7A3F3BZZ4CQQ56",
        "AKIAIOSFODNN7EXAMPLE",
    ),
    "aws-secret-access-key": (
        "aws_secret_access_key = " + "k" * 20 + "Q9/+" * 5,
        "k" * 20 + "Q9/+" * 5,
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    "github-token": (f"ghp_{A36}", f"ghp_{A36}", "ghp_short"),
    "github-fine-grained-token": (
        "github_pat_" + A36 + "_" + A36 + "abcdefghijk",
        "github_pat_" + A36 + "_" + A36 + "abcdefghijk",
        "github_pat_tooshort",
    ),
    "gitlab-token": ("glpat-" + A36[:20], "glpat-" + A36[:20], "glpat-short"),
    "anthropic-api-key": (
        "sk-ant-api03-" + A36 * 2 + "AA",
        "sk-ant-api03-" + A36 * 2 + "AA",
        "sk-ant-api03-short",
    ),
    "openai-api-key": ("sk-proj-" + A36 * 2, "sk-proj-" + A36 * 2, "sk-learn is not a key"),
    "groq-api-key": ("gsk_" + A36 + A36[:16], "gsk_" + A36 + A36[:16], "gsk_short"),
    "xai-api-key": ("xai-" + A36 * 2 + "abcdefgh", "xai-" + A36 * 2 + "abcdefgh", "xai-grok-2"),
    "perplexity-api-key": ("pplx-" + A36 + "abcdefgh", "pplx-" + A36 + "abcdefgh", "pplx-api docs"),
    "replicate-api-token": ("r8_" + A36 + "a", "r8_" + A36 + "a", "r8_short"),
    "huggingface-token": ("hf_" + A36[:34], "hf_" + A36[:34], "hf_hub_download(repo_id)"),
    "google-api-key": ("AIza" + A36[:35], "AIza" + A36[:35], "AIza-short"),
    "google-oauth-client-secret": ("GOCSPX-" + A36[:28], "GOCSPX-" + A36[:28], "GOCSPX-x"),
    "slack-token": (
        "xoxb-123456789012-1234567890123-" + A36[:24],
        "xoxb-123456789012-1234567890123-" + A36[:24],
        "xoxb-short",
    ),
    "slack-webhook": (
        "https://hooks.slack.com/services/T0000/B0000/" + A36[:24],
        "https://hooks.slack.com/services/T0000/B0000/" + A36[:24],
        "https://hooks.slack.com/docs",
    ),
    "discord-webhook": (
        "https://discord.com/api/webhooks/123456789012345678/" + A36 * 2,
        "https://discord.com/api/webhooks/123456789012345678/" + A36[:34] * 2,
        "https://discord.com/developers/docs",
    ),
    "discord-bot-token": (
        "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "Mozilla.Firefox.Nightly",
    ),
    "telegram-bot-token": ("bot123456789:AA" + A36[:33], "123456789:AA" + A36[:33], "12:34:56 AA"),
    "stripe-key": ("sk_live_" + A36[:24], "sk_live_" + A36[:24], "sk_live_short"),
    "sendgrid-api-key": (
        "SG." + A36[:22] + "." + A36 + "abcdefg",
        "SG." + A36[:22] + "." + A36 + "abcdefg",
        "SG.x.y",
    ),
    "twilio-api-key": ("SK" + "0123456789abcdef" * 2, "SK" + "0123456789abcdef" * 2, "SKU-12345"),
    "mailgun-api-key": (
        "key-" + "0123456789abcdef" * 2,
        "key-" + "0123456789abcdef" * 2,
        "key-value store",
    ),
    "npm-token": ("npm_" + A36, "npm_" + A36, "npm_config_cache"),
    "pypi-token": (
        "pypi-AgEIcHlwaS5vcmc" + A36 * 2,
        "pypi-AgEIcHlwaS5vcmc" + A36 * 2,
        "pypi-simple index",
    ),
    "digitalocean-token": ("dop_v1_" + "ab12" * 16, "dop_v1_" + "ab12" * 16, "dop_v1_x"),
    "shopify-token": ("shpat_" + "ab12" * 8, "shpat_" + "ab12" * 8, "shpat_short"),
    "vault-token": ("hvs." + A36[:24], "hvs." + A36[:24], "hvs.short"),
    "databricks-token": ("dapi" + "ab12" * 8, "dapi" + "ab12" * 8, "dapi docs"),
    "linear-api-key": ("lin_api_" + A36 + "abcd", "lin_api_" + A36 + "abcd", "lin_api_x"),
    "azure-storage-key": (
        "AccountKey=" + A36 * 2 + A36[:14] + "==",
        A36 * 2 + A36[:14] + "==",
        "AccountKey=<key>",
    ),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
        "eyJhbGciOiJIUzI1NiJ9 alone",
    ),
    "connection-string-password": (
        "postgres://app:Zq4v9!x@db:5432/shop",
        "Zq4v9!x",
        "postgres://user:password@localhost/db",
    ),
    "bearer-token": ("Authorization: Bearer " + A36, A36, "Authorization: Bearer $TOKEN"),
    "basic-auth-header": (
        "Authorization: Basic dXNlcjpTM2NyZXRQYXNzd29yZA==",
        "dXNlcjpTM2NyZXRQYXNzd29yZA==",
        "basic auth is enabled",
    ),
    "url-query-secret": (
        "https://x.dev/cb?access_token=" + A36[:20],
        A36[:20],
        "https://x.dev/search?token=page2",
    ),
    "cli-password": ("mysql -u root -pS3cretPw shop", "S3cretPw", "mkdir -p /tmp/x"),
    "env-assignment": ("DB_PASSWORD=hunter2", "hunter2", "TOKEN_LIMIT=4096"),
    "api-key-header": (
        "curl -H 'X-API-Key: 9f8e7d6c5b4a3210fedcba98' https://api.x.dev",
        "9f8e7d6c5b4a3210fedcba98",
        "curl -H 'X-API-Key: $API_KEY' https://x",
    ),
    "secret-field": ('{"password": "s3cr3t!"}', "s3cr3t!", '{"password": "${DB_PASSWORD}"}'),
}


def test_every_kind_has_a_case():
    assert set(CASES) == set(redact.KINDS)
    assert len(redact.KINDS) >= 25


@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_positive(kind):
    text, secret, _ = CASES[kind]
    masked, found = redact.mask_text(text)
    assert secret not in masked, masked
    assert kind in [k for k, _ in found], found
    assert f"[REDACTED:{kind}:" in masked


@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_negative(kind):
    _, _, near_miss = CASES[kind]
    assert redact.mask_text(near_miss) == (near_miss, [])


def load_corpus():
    secrets = [json.loads(x) for x in (CORPUS / "secrets.jsonl").read_text().splitlines()]
    clean = [json.loads(x) for x in (CORPUS / "clean.jsonl").read_text().splitlines()]
    return secrets, clean


def test_corpus_figures(capsys):
    secrets, clean = load_corpus()
    secrets = [r for r in secrets if r["set"] == "dev"]
    clean = [c["text"] for c in clean if c["set"] == "dev"]
    kinds = {r["kind"] for r in secrets}
    assert len(secrets) >= 200 and len(kinds) >= 25 and len(clean) >= 200
    missed = [r for r in secrets if r["secret"] in redact.mask_text(r["text"])[0]]
    altered = [c for c in clean if redact.mask_text(c)[0] != c]
    recall = 1 - len(missed) / len(secrets)
    fpr = len(altered) / len(clean)
    with capsys.disabled():
        print(
            f"\nredaction corpus: {len(secrets)} secrets over {len(kinds)} kinds, recall "
            f"{recall:.1%}; {len(clean)} clean lines, {fpr:.1%} altered"
        )
    assert recall >= 0.97, [m["text"][:80] for m in missed]
    assert fpr <= 0.03, [a[:80] for a in altered]


def test_same_secret_same_token_across_records_and_another_install(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "one"))
    text = f"push with ghp_{A36} then again ghp_{A36}"
    masked, found = redact.mask_text(text)
    assert found[0] == found[1]
    assert masked.count(f"[REDACTED:github-token:{found[0][1]}]") == 2
    again, _ = redact.mask_text(f"later: ghp_{A36}")
    assert found[0][1] in again
    key = tmp_path / "one" / "agent-ways" / "redaction.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "two"))
    _, other = redact.mask_text(text)
    assert other[0][1] != found[0][1]


def test_mask_record_walks_everything_and_lists_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    rec = {
        "schema": "ways.sensor.record/1",
        "section": "tool_result",
        "data": {
            "input": {"command": "DB_PASSWORD=hunter2 ./run"},
            "output": {"stdout": ["ok", f"token ghp_{A36}"]},
            "extra": {"env": {"x": "postgres://a:Zq4v9!x@h/db"}},
        },
    }
    out = redact.mask_record(rec)
    flat = json.dumps(out)
    assert "hunter2" not in flat and A36 not in flat and "Zq4v9!x" not in flat
    paths = {(r["kind"], r["path"]) for r in out["redactions"]}
    assert paths == {
        ("env-assignment", "data.input.command"),
        ("github-token", "data.output.stdout.1"),
        ("connection-string-password", "data.extra.env.x"),
    }
    assert "redactions" not in redact.mask_record({"data": {"x": "clean"}})
    assert os.path.exists(tmp_path / "agent-ways" / "redaction.key")
