"""Held-out look-alikes: lines the scan must leave as they are, by the family they imitate.

Written with heldout.py (same seed stream, imported after it) from the false positives
public scanners document (gitleaks' curl and kubernetes rules, detect-secrets' keyword
negatives): code that reads a secret, URLs without a password, CLI flags that are not
passwords, placeholders, empty values.
"""

from __future__ import annotations

import string
from collections.abc import Callable

from heldout import B64, HEX, A, R, host, rs

# (family, generator) of lines that must come through unchanged
CLEAN: list[tuple[str, Callable[[], str]]] = [
    ("reference", lambda: 'STRIPE_SECRET_KEY = os.getenv("STRIPE_SECRET_KEY")'),
    ("reference", lambda: "const apiKey = process.env.OPENAI_API_KEY;"),
    ("reference", lambda: 'SECRET_KEY_BASE = ENV["SECRET_KEY_BASE"]'),
    ("reference", lambda: "token: ${{ secrets.NPM_TOKEN }}"),
    ("reference", lambda: 'db_password = os.environ["DB_PASSWORD"]'),
    ("reference", lambda: 'String pw = System.getenv("DB_PASSWORD");'),
    ("reference", lambda: 'apiKey := os.Getenv("AWS_SECRET_ACCESS_KEY")'),
    ("reference", lambda: 'let token = std::env::var("GITHUB_TOKEN")?;'),
    ("reference", lambda: "password = settings.DATABASE_PASSWORD"),
    ("reference", lambda: "api_key = config.get('openai', 'api_key')"),
    ("reference", lambda: "login(username=username, password=password)"),
    ("reference", lambda: "$password = $input;"),
    ("reference", lambda: "apiKey: this.apiKey,"),
    ("reference", lambda: "AUTH_TOKEN=$(vault kv get -field=token secret/ci)"),
    ("reference", lambda: 'secret = Deno.env.get("WEBHOOK_SECRET");'),
    ("reference", lambda: "export API_TOKEN=${API_TOKEN:-}"),
    ("reference", lambda: "client_secret: ${OIDC_CLIENT_SECRET}"),
    ("reference", lambda: "password = request.form['password']"),
    ("reference", lambda: "token = secrets.token_urlsafe(32)"),
    ("reference", lambda: 'SECRET_KEY = env("DJANGO_SECRET_KEY", default=None)'),
    ("url-no-credentials", lambda: f"postgres://{host()}:5432/shop"),
    ("url-no-credentials", lambda: "git clone ssh://git@github.com:22/acme/app.git"),
    ("url-no-credentials", lambda: "https://www.npmjs.com/package/@types/node"),
    ("url-no-credentials", lambda: f"redis://{host()}:6379/{R.randint(0, 15)}"),
    ("url-no-credentials", lambda: "mysql://root:${DB_PASS}@db/app"),
    ("url-no-credentials", lambda: "https://deploy@ci.acme.dev/hooks"),
    ("url-no-credentials", lambda: "docker pull docker.io/library/redis:7@sha256:" + rs(HEX, 64)),
    ("cli-no-secret", lambda: "docker login -u ci --password-stdin registry.acme.dev"),
    ("cli-no-secret", lambda: "mysql -u root -p shop"),
    ("cli-no-secret", lambda: f"psql -h db -p {R.randint(5432, 5439)} -U app shop"),
    ("cli-no-secret", lambda: f"docker run -p {R.randint(3000, 9000)}:80 -d nginx"),
    ("cli-no-secret", lambda: 'redis-cli -a "$REDIS_PASSWORD" PING'),
    ("cli-no-secret", lambda: "pytest -p no:cacheprovider -q tests/"),
    ("cli-no-secret", lambda: "git commit -a -m 'fix token refresh'"),
    ("cli-no-secret", lambda: 'curl -u "$USER:$PASS" https://api.acme.dev'),
    ("cli-no-secret", lambda: "curl -u admin https://api.acme.dev/health"),
    ("cli-no-secret", lambda: "openssl rsa -in enc.key -passin env:KEY_PASS -out k.pem"),
    ("cli-no-secret", lambda: "mysqldump --password --user=root shop > shop.sql"),
    ("cli-no-secret", lambda: "sqlcmd -S db -U sa -P $SA_PASSWORD -Q 'SELECT 1'"),
    ("cli-no-secret", lambda: "gh auth login --with-token < token.txt"),
    ("cli-no-secret", lambda: "ssh -p 2222 -i ~/.ssh/id_ed25519 deploy@host"),
    ("cli-no-secret", lambda: "curl -u username:password https://api.acme.dev/docs"),
    ("name-value-no-secret", lambda: "- name: LOG_LEVEL\n  value: debug"),
    (
        "name-value-no-secret",
        lambda: (
            "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n"
            "      key: password"
        ),
    ),
    ("name-value-no-secret", lambda: '- name: API_TOKEN\n  value: ""'),
    ("name-value-no-secret", lambda: "- name: DB_PASSWORD\n  value: {{ .Values.db.password }}"),
    ("name-value-no-secret", lambda: '{"name": "PORT", "value": "8080"}'),
    ("name-value-no-secret", lambda: "ParameterKey=InstanceType,ParameterValue=t3.micro"),
    ("query-no-secret", lambda: f"https://api.acme.dev/items?page={R.randint(1, 9)}&sort=key"),
    ("query-no-secret", lambda: "https://x.dev/search?keyword=token&monkey=banana"),
    ("query-no-secret", lambda: "https://api.acme.dev/v1?api_key=YOUR_API_KEY"),
    ("query-no-secret", lambda: "https://maps.acme.dev/geo?key=${MAPS_KEY}&q=Berlin"),
    ("query-no-secret", lambda: "https://docs.acme.dev/auth?section=access_token&lang=en"),
    ("query-no-secret", lambda: f"https://cdn.acme.dev/app.js?v={rs(HEX, 8)}"),
    ("prose-no-secret", lambda: "Forgot your password? Click 'Reset' to get a link."),
    ("prose-no-secret", lambda: "The password must contain at least 12 characters."),
    ("prose-no-secret", lambda: "password: ********"),
    ("prose-no-secret", lambda: "password: required"),
    ("prose-no-secret", lambda: "Enter password: "),
    ("prose-no-secret", lambda: "Password reset tokens expire after 30 minutes."),
    ("prose-no-secret", lambda: "the password is stored in the keychain, never in the repo"),
    ("docker-no-secret", lambda: '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}'),
    ("docker-no-secret", lambda: '{"credHelpers": {"gcr.io": "gcloud"}}'),
    ("docker-no-secret", lambda: '"auth": "oauth2"'),
    (
        "adjacency-lookalike",
        lambda: "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("adjacency-lookalike", lambda: f"deployed {rs(HEX, 40)} to prod in 2{R.randint(10, 99)}s"),
    ("adjacency-lookalike", lambda: f"AKIAIOSFODNN7EXAMPLE then commit {rs(HEX, 40)}"),
    ("adjacency-lookalike", lambda: f"ACCOUNT_SID=AC{rs(HEX, 32)} REGION=us1"),
    ("chat-lookalike", lambda: f"build {R.randint(10**8, 10**9)}:AAA finished"),
    ("chat-lookalike", lambda: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0"),
    ("chat-lookalike", lambda: f"MTAxNzE2.{rs(A, 4)} is the build tag"),
    ("vendor-lookalike", lambda: f'"integrity": "sha512-{rs(B64, 86)}=="'),
    ("vendor-lookalike", lambda: f"cus_{rs(A, 14)} pi_{rs(A, 24)}"),
    (
        "vendor-lookalike",
        lambda: f"ok  github.com/acme/app/internal/{rs(string.ascii_lowercase, 8)}",
    ),
    ("vendor-lookalike", lambda: f"sha256-{rs(B64, 43)}= main.js"),
    ("vendor-lookalike", lambda: "import { getAuthToken } from './auth_token_provider';"),
    ("vendor-lookalike", lambda: f"image: ghcr.io/acme/app:{rs(HEX, 12)}"),
]

CLEAN_COUNT = 110


def clean() -> list[dict[str, str]]:
    out = []
    for i in range(CLEAN_COUNT):
        family, gen = CLEAN[i % len(CLEAN)] if i < len(CLEAN) else R.choice(CLEAN)
        out.append({"family": family, "text": gen()})
    return out
