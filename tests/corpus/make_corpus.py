"""Writes the labelled redaction corpus: `secrets.jsonl` and `clean.jsonl`, from fixed seeds.

secrets.jsonl: {"kind", "family", "set", "text", "secret"} per line: a fake secret of the
right shape in realistic text (shell commands, .env lines, JSON config, curl headers, log
lines, source code). clean.jsonl: {"family", "set", "text"} per line: text full of
look-alikes that must come through unchanged: git SHAs, UUIDs, sha256 sums, base64 blobs,
lockfile integrity hashes, documented example keys, ids, limits like TOKEN_LIMIT=4096,
and code that reads a secret without holding one.

`set` is "dev" for the cases written with the scan in view (this module) and "heldout"
for the cases written from public scanners' documented shapes before the scan grew to
meet them (heldout.py); the figures are reported for both.
Run: python tests/corpus/make_corpus.py (the output is committed; tests read it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from pathlib import Path

import heldout
import heldout_clean

R = random.Random(20261129)
HERE = Path(__file__).resolve().parent
A = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"


def rs(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def pem(kind: str) -> str:
    body = "\n".join(rs(A + "+/", 64) for _ in range(R.randint(3, 6)))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def jwt() -> str:
    def seg(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return (
        seg({"alg": "HS256", "typ": "JWT"})
        + "."
        + seg({"sub": rs(string.digits, 8), "name": "dev", "iat": R.randint(10**9, 2 * 10**9)})
        + "."
        + rs(A + "-_", 43)
    )


def password() -> str:
    return R.choice(
        [
            rs(A, R.randint(8, 16)),
            rs(A + "!@#%^*", 12),
            R.choice(
                [
                    "hunter2",
                    "Tr0ub4dor&3",
                    "s3cr3tP@ss",
                    "correct-horse-9",
                    "Winter2026!",
                    "pa55w0rd",
                    "q1w2e3r4t5",
                ]
            ),
        ]
    )


GEN = {
    "private-key": lambda: pem(R.choice(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "])),
    "aws-access-key-id": lambda: (
        R.choice(["AKIA", "ASIA"]) + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    ),
    "aws-secret-access-key": lambda: rs(A + "/+", 40),
    "github-token": lambda: R.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + rs(A, 36),
    "github-fine-grained-token": lambda: "github_pat_" + rs(A, 22) + "_" + rs(A, 59),
    "gitlab-token": lambda: "glpat-" + rs(A + "-_", 20),
    "anthropic-api-key": lambda: "sk-ant-api03-" + rs(A + "-_", 93) + "AA",
    "openai-api-key": lambda: R.choice(
        [
            "sk-proj-" + rs(A + "-_", 74) + "T3BlbkFJ" + rs(A + "-_", 74),
            "sk-" + rs(A, 20) + "T3BlbkFJ" + rs(A, 20),
        ]
    ),
    "groq-api-key": lambda: "gsk_" + rs(A, 52),
    "huggingface-token": lambda: "hf_" + rs(A, 34),
    "google-api-key": lambda: "AIza" + rs(A + "-_", 35),
    "google-oauth-client-secret": lambda: "GOCSPX-" + rs(A + "-_", 28),
    "slack-token": lambda: (
        R.choice(["xoxb-", "xoxp-"])
        + rs(string.digits, 12)
        + "-"
        + rs(string.digits, 13)
        + "-"
        + rs(A, 24)
    ),
    "slack-webhook": lambda: (
        "https://hooks.slack.com/services/T" + rs(UP, 8) + "/B" + rs(UP, 10) + "/" + rs(A, 24)
    ),
    "discord-webhook": lambda: (
        "https://discord.com/api/webhooks/" + rs(string.digits, 18) + "/" + rs(A + "-_", 68)
    ),
    "telegram-bot-token": lambda: rs(string.digits, 10) + ":AA" + rs(A + "-_", 33),
    "stripe-key": lambda: R.choice(["sk_live_", "rk_live_", "sk_test_"]) + rs(A, 24),
    "sendgrid-api-key": lambda: "SG." + rs(A + "-_", 22) + "." + rs(A + "-_", 43),
    "twilio-api-key": lambda: "SK" + rs(HEX, 32),
    "npm-token": lambda: "npm_" + rs(A, 36),
    "pypi-token": lambda: "pypi-AgEIcHlwaS5vcmc" + rs(A + "-_", 70),
    "digitalocean-token": lambda: "dop_v1_" + rs(HEX, 64),
    "shopify-token": lambda: "shpat_" + rs(HEX, 32),
    "vault-token": lambda: "hvs." + rs(A, 24),
    "databricks-token": lambda: "dapi" + rs(HEX, 32),
    "azure-storage-key": lambda: rs(A + "+/", 86) + "==",
    "jwt": jwt,
    "connection-string-password": password,
    "bearer-token": lambda: rs(A + "-._~", R.randint(24, 48)),
    "env-assignment": password,
    "secret-field": password,
    "cli-password": password,
    "api-key-header": lambda: rs(A, 32),
}

# (kind, template) pairs; {s} is the secret
TEMPLATES = {
    "private-key": [
        "cat ~/.ssh/id_ed25519\n{s}\n",
        '{{"private_key": "{s}"}}',
        "Found key material in deploy/key.pem:\n{s}",
    ],
    "aws-access-key-id": [
        "export AWS_ACCESS_KEY_ID={s}",
        "aws_access_key_id = {s}",
        '{{"AccessKeyId": "{s}", "Expiration": "2026-12-01T00:00:00Z"}}',
        "2026-11-29 11:40:02 INFO using credentials {s} for s3 upload",
    ],
    "aws-secret-access-key": [
        "aws_secret_access_key = {s}",
        "AWS_SECRET_ACCESS_KEY={s}",
        '{{"aws_secret_access_key": "{s}"}}',
        "export AWS_SECRET_ACCESS_KEY='{s}'",
    ],
    "github-token": [
        "git push https://x:{s}@github.com/acme/app.git",
        'curl -H "Authorization: token {s}" https://api.github.com/user',
        "GITHUB_TOKEN={s}",
        'const octokit = new Octokit({{ auth: "{s}" }});',
    ],
    "github-fine-grained-token": ["export GH_TOKEN={s}", "gh auth login --with-token <<< {s}"],
    "gitlab-token": [
        "git clone https://oauth2:{s}@gitlab.com/acme/app.git",
        'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.com/api/v4/projects',
    ],
    "anthropic-api-key": [
        "ANTHROPIC_API_KEY={s}",
        'client = Anthropic(api_key="{s}")',
        'curl https://api.anthropic.com/v1/messages -H "x-api-key: {s}"',
    ],
    "openai-api-key": [
        "OPENAI_API_KEY={s}",
        'openai.api_key = "{s}"',
        'curl -H "Authorization: Bearer {s}" https://api.openai.com/v1/models',
    ],
    "groq-api-key": ["GROQ_API_KEY={s}", 'client = Groq(api_key="{s}")'],
    "huggingface-token": ["huggingface-cli login --token {s}", "HF_TOKEN={s}"],
    "google-api-key": [
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key={s}",
        'const firebaseConfig = {{ apiKey: "{s}" }};',
    ],
    "google-oauth-client-secret": [
        '{{"client_id": "123.apps.googleusercontent.com", "client_secret": "{s}"}}'
    ],
    "slack-token": ["SLACK_BOT_TOKEN={s}", 'app = App(token="{s}")'],
    "slack-webhook": ['curl -X POST -d \'{{"text":"deploy done"}}\' {s}', "SLACK_WEBHOOK_URL={s}"],
    "discord-webhook": ["curl -H 'Content-Type: application/json' -d @msg.json {s}"],
    "telegram-bot-token": ["curl https://api.telegram.org/bot{s}/getMe", "BOT_TOKEN={s}"],
    "stripe-key": [
        "STRIPE_SECRET_KEY={s}",
        'stripe.api_key = "{s}"',
        "curl https://api.stripe.com/v1/charges -u {s}:",
    ],
    "sendgrid-api-key": ["SENDGRID_API_KEY={s}", 'sg = SendGridAPIClient("{s}")'],
    "twilio-api-key": [
        "twilio api:core:messages:create --api-key {s}",
        'client = Client("{s}", api_secret, account_sid)',
    ],
    "npm-token": ["//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}"],
    "pypi-token": ["twine upload -u __token__ -p {s} dist/*", "password = {s}"],
    "digitalocean-token": ["doctl auth init -t {s}", "DIGITALOCEAN_TOKEN={s}"],
    "shopify-token": ['headers = {{"X-Shopify-Access-Token": "{s}"}}'],
    "vault-token": ["export VAULT_TOKEN={s}", "vault login {s}"],
    "databricks-token": ["DATABRICKS_TOKEN={s}", "databricks configure --token {s}"],
    "azure-storage-key": [
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};"
        "EndpointSuffix=core.windows.net"
    ],
    "jwt": [
        'curl -H "Authorization: Bearer {s}" https://api.acme.dev/me',
        "2026-11-29T11:40:02Z DEBUG session cookie={s}",
        '{{"id_token": "{s}"}}',
    ],
    "connection-string-password": [
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/shop",
        'mongo "mongodb+srv://admin:{s}@cluster0.x1y2z.mongodb.net/test"',
        "redis-cli -u redis://default:{s}@cache:6379",
        "amqp://guest:{s}@rabbit:5672/vhost",
    ],
    "bearer-token": [
        'curl -H "Authorization: Bearer {s}" https://api.acme.dev/v1/orders',
        "Authorization: Bearer {s}",
    ],
    "env-assignment": [
        "DB_PASSWORD={s}",
        "export POSTGRES_PASSWORD={s}",
        "REDIS_PASS={s}",
        "ADMIN_SECRET={s}",
        "SMTP_PASSWORD='{s}'",
        "JWT_SECRET={s}",
    ],
    "secret-field": [
        '{{"password": "{s}"}}',
        "password: {s}",
        'db_password = "{s}"',
        '"client_secret": "{s}",',
        "  secret: {s}",
        "[client]\npassword = {s}",
        "$password = '{s}';",
    ],
    "api-key-header": [
        "curl -H 'X-API-Key: {s}' https://api.acme.dev/v2/items",
        "x-api-key: {s}",
        'headers = {{"X-Auth-Token": "{s}"}}',
    ],
    "cli-password": [
        "mysql -u root -p{s} shop",
        "psql --password={s} -h db",
        "sshpass -p {s} ssh deploy@host",
        "PGPASSWORD={s} psql -h db -U app",
    ],
}

FAMILY = {
    "private-key": "private-key",
    "jwt": "jwt",
    "slack-webhook": "webhook-url",
    "discord-webhook": "webhook-url",
    "telegram-bot-token": "chat-bot-token",
    "connection-string-password": "url-credentials",
    "bearer-token": "auth-header",
    "api-key-header": "auth-header",
    "env-assignment": "env-assignment",
    "secret-field": "key-value",
    "aws-secret-access-key": "key-value",
    "azure-storage-key": "key-value",
    "cli-password": "cli-password",
}  # every other dev kind is a provider's prefixed shape: "vendor-prefix"

CLEAN = [
    lambda: f"commit {rs(HEX, 40)}\nAuthor: Dev <dev@example.com>",
    lambda: f"git checkout {rs(HEX, 7)} && git log --oneline -1 {rs(HEX, 40)}",
    lambda: f"request_id={uuid.UUID(int=R.getrandbits(128))} status=200 took=12ms",
    lambda: f"{hashlib.sha256(rs(A, 20).encode()).hexdigest()}  dist/app-1.4.2.tar.gz",
    lambda: f"sha256:{hashlib.sha256(rs(A, 9).encode()).hexdigest()}",
    lambda: f'"integrity": "sha512-{base64.b64encode(R.randbytes(64)).decode()}",',
    lambda: f"data:image/png;base64,{base64.b64encode(R.randbytes(48)).decode()}",
    lambda: "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    lambda: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    lambda: f"TOKEN_LIMIT={R.choice([1024, 2048, 4096, 8192])}",
    lambda: f"MAX_TOKENS={R.randint(100, 9000)}",
    lambda: "export GITHUB_TOKEN=$(gh auth token)",
    lambda: 'curl -H "Authorization: Bearer $API_TOKEN" https://api.acme.dev',
    lambda: "password: ${DB_PASSWORD}",
    lambda: 'api_key: "<your-api-key>"',
    lambda: "OPENAI_API_KEY=your-api-key-here",
    lambda: f"postgres://localhost:{R.randint(5000, 6000)}/shop",
    lambda: "DATABASE_URL=postgres://user:password@localhost:5432/mydb",
    lambda: f"https://github.com/acme/app/pull/{R.randint(1, 9999)}",
    lambda: f"msg_01{rs(A, 22)} toolu_01{rs(A, 22)}",
    lambda: f"arn:aws:iam::{rs(string.digits, 12)}:role/deploy",
    lambda: f"docker pull ghcr.io/acme/app@sha256:{hashlib.sha256(R.randbytes(8)).hexdigest()}",
    lambda: f"SORT_KEY=created_at PRIMARY_KEY=id PAGE_TOKEN_TTL={R.randint(10, 99)}",
    lambda: "AUTH_ENABLED=true PASSWORD_MIN_LENGTH=12 SECRET_NAME=db-creds",
    lambda: f'  File "/usr/lib/python3.11/site-packages/x.py", line {R.randint(1, 900)}, in run',
    lambda: f"npm WARN deprecated inflight@1.0.6: see {rs(HEX, 8)}",
    lambda: f"ok  github.com/acme/app/internal/token  0.{R.randint(10, 99)}s",
    lambda: "def get_token(self) -> str: return self._token",
    lambda: "The API key is read from the environment variable ANTHROPIC_API_KEY.",
    lambda: f"uuid: {uuid.UUID(int=R.getrandbits(128))}",
    lambda: "mkdir -p /tmp/build && cp -p src/a dst/ && ssh -p 2222 deploy@host",
    lambda: f'ETag: "{rs(HEX, 32)}"',
    lambda: f"Content-MD5: {base64.b64encode(R.randbytes(16)).decode()}",
    lambda: f"{rs(HEX, 12)}  {rs(A, 10)}.jpg  {R.randint(1, 9)}.{R.randint(0, 9)} MB",
    lambda: "tokenizer.encode('hello world') -> [15339, 1917]",
    lambda: f"session_id={uuid.UUID(int=R.getrandbits(128))} user=dev",
    lambda: "kubectl get secret db-creds -o jsonpath='{.data.password}' | base64 -d",
    lambda: f"x-request-id: req_{rs(A, 24)}",
    lambda: f"Bearer token expired at 2026-11-29T{R.randint(10, 23)}:00:00Z",
    lambda: f'version = "{R.randint(0, 9)}.{R.randint(0, 30)}.{R.randint(0, 99)}"',
]


def clean_family(index: int) -> str:
    """Dev look-alikes by what they imitate (their place in CLEAN)."""
    if index in (11, 12, 13):
        return "reference"
    if index in (7, 8, 14, 15, 17):
        return "placeholder"
    return "look-alike"


def main() -> None:
    rows = []
    kinds = sorted(TEMPLATES)
    for kind in kinds:
        for i in range(8):
            tpl = TEMPLATES[kind][i % len(TEMPLATES[kind])]
            secret = GEN[kind]()
            rows.append(
                {
                    "kind": kind,
                    "family": FAMILY.get(kind, "vendor-prefix"),
                    "set": "dev",
                    "text": tpl.format(s=secret),
                    "secret": secret,
                }
            )
    R.shuffle(rows)
    held = heldout.secrets()
    rows += [{**r, "set": "heldout"} for r in held]
    with open(HERE / "secrets.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    clean = []
    for _ in range(240):
        index = R.randrange(len(CLEAN))
        clean.append({"family": clean_family(index), "set": "dev", "text": CLEAN[index]()})
    clean += [{**c, "set": "heldout"} for c in heldout_clean.clean()]
    with open(HERE / "clean.jsonl", "w") as f:
        for line in clean:
            f.write(json.dumps(line) + "\n")
    kinds_all = {r["kind"] for r in rows}
    print(
        f"{len(rows)} secrets over {len(kinds_all)} kinds ({len(held)} held out), "
        f"{len(clean)} clean lines"
    )


if __name__ == "__main__":
    main()
