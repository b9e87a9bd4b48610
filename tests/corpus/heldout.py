"""The held-out part of the redaction corpus: secret shapes the scan was not written against.

Written before the scan grew to meet them, from the shapes public secret scanners
document in their rule tests (gitleaks' curl, kubernetes and generic rules,
detect-secrets' keyword plugin, trufflehog's URI, docker and key-pair detectors), with
values invented here from a fixed seed. Each case names its `kind` (what the secret is)
and its `family` (the structure it hides in), so recall is reported per family.
Imported by make_corpus.py, which writes the rows with `"set": "heldout"`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from heldout_values import (
    B64,
    HEX,
    URLSAFE,
    A,
    R,
    aws_id,
    aws_secret,
    b64,
    discord_bot,
    host,
    pw,
    rs,
    telegram,
    user,
)

# kind -> (family, secret generator, templates); {s} the secret, {u} a user, {h} a host,
# {i} a key id of the secret's vendor
Case = tuple[str, Callable[[], str], list[str]]
CASES: dict[str, Case] = {
    "url-password-empty-user": (
        "url-credentials",
        pw,
        [
            "REDIS_URL=redis://:{s}@{h}:6379/0",
            "celery -A app worker -b 'amqp://:{s}@{h}:5672//'",
            'cache = Redis.from_url("rediss://:{s}@{h}:6380")',
            "connecting to redis://:{s}@{h}:6379 ... ok",
        ],
    ),
    "url-password": (
        "url-credentials",
        pw,
        [
            "export HTTPS_PROXY=http://{u}:{s}@proxy.corp:3128",
            "pip install --index-url https://{u}:{s}@pypi.acme.dev/simple pkg",
            "lftp ftp://{u}:{s}@files.acme.dev/upload",
            "SMTP_URL=smtp://{u}%40acme.dev:{s}@{h}:587",
            "https://{u}:{s}@git.acme.dev/team/app.git",
        ],
    ),
    "jdbc-password": (
        "url-credentials",
        pw,
        [
            "spring.datasource.url=jdbc:postgresql://{h}:5432/shop?user={u}&password={s}",
            'url: "jdbc:mysql://{h}:3306/app?useSSL=true&user={u}&password={s}"',
        ],
    ),
    "docker-config-auth": (
        "docker-auths",
        lambda: b64(f"{user()}:{pw()}"),
        [
            '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{s}"}}}}}}',
            '{{\n  "auths": {{\n    "ghcr.io": {{\n      "auth": "{s}"\n    }}\n  }}\n}}',
            '"registry.acme.dev": {{"auth": "{s}", "email": "ci@acme.dev"}}',
            'DOCKER_AUTH_CONFIG=\'{{"auths":{{"registry.gitlab.com":{{"auth":"{s}"}}}}}}\'',
        ],
    ),
    "dockerconfigjson": (
        "docker-auths",
        lambda: b64(
            json.dumps(
                {"auths": {"ghcr.io": {"auth": b64(f"{user()}:{pw()}")}}}, separators=(",", ":")
            )
        ),
        [
            "data:\n  .dockerconfigjson: {s}\ntype: kubernetes.io/dockerconfigjson",
            'kubectl get secret regcred -o jsonpath=\'{{.data}}\'\n{{".dockerconfigjson":"{s}"}}',
        ],
    ),
    "docker-login-password": (
        "cli-password",
        pw,
        [
            "docker login -u {u} -p {s} registry.acme.dev",
            "podman login --username {u} --password {s} quay.io",
            "echo done && docker login registry.gitlab.com -u {u} -p '{s}'",
        ],
    ),
    "curl-user-password": (
        "curl-user",
        pw,
        [
            "curl -u {u}:{s} https://api.acme.dev/v1/builds",
            "curl --user '{u}:{s}' -X POST https://jenkins.acme.dev/job/x/build",
            'curl -s -v --user "{u}:{s}" "https://api.acme.dev/user/me"',
            "curl -X GET https://{h}/api \\\n  -H 'Accept: application/json' \\\n  -u {u}:{s}",
            'curl -u ":{s}" https://{h}:9200/_cluster/health',
        ],
    ),
    "mysql-password-flag": (
        "cli-password",
        pw,
        [
            "mysql -h {h} -u {u} -p{s} shop < dump.sql",
            "mysqldump --user={u} --password={s} --all-databases > all.sql",
            "mariadb -u{u} -p'{s}' -e 'SHOW DATABASES'",
            "mysqladmin -u root --password='{s}' status",
        ],
    ),
    "redis-cli-password": (
        "cli-password",
        pw,
        [
            "redis-cli -h {h} -p 6379 -a {s} PING",
            "redis-cli -a '{s}' --no-auth-warning INFO",
            "redis-cli --pass {s} -h {h} KEYS '*'",
        ],
    ),
    "mongo-cli-password": (
        "cli-password",
        pw,
        [
            "mongosh --host {h} -u {u} -p {s} --authenticationDatabase admin",
            "mongodump --username {u} --password '{s}' --db shop",
        ],
    ),
    "sqlcmd-password": (
        "cli-password",
        pw,
        [
            "sqlcmd -S {h} -U sa -P '{s}' -Q 'SELECT 1'",
            "/opt/mssql-tools/bin/sqlcmd -S localhost -U sa -P {s}",
        ],
    ),
    "cli-token-flag": (
        "cli-password",
        lambda: rs(A, R.randint(28, 40)),
        [
            "terraform login --token {s}",
            "vercel deploy --prod --token {s}",
            "./deploy.sh --api-key {s} --region eu-west-1",
            "az ad sp create --client-secret {s}",
            "gitlab-runner register --registration-token {s} --url https://gitlab.acme.dev",
        ],
    ),
    "openssl-passphrase": (
        "cli-password",
        pw,
        [
            "openssl pkcs12 -export -in cert.pem -inkey key.pem -out c.p12 -passout pass:{s}",
            "openssl rsa -in enc.key -out plain.key -passin pass:{s}",
        ],
    ),
    "keytool-storepass": (
        "cli-password",
        pw,
        [
            "keytool -importcert -keystore truststore.jks -storepass {s} -file ca.crt",
            "keytool -genkeypair -alias app -keystore app.jks -keypass {s} -storepass {s}",
        ],
    ),
    "k8s-env-value": (
        "name-value-pair",
        pw,
        [
            "env:\n  - name: DB_PASSWORD\n    value: {s}",
            '        - name: STRIPE_API_TOKEN\n          value: "{s}"',
            "- name: REDIS_AUTH\n  value: '{s}'",
            "env:\n- name: APP_SECRET\n  value: {s}\n- name: LOG_LEVEL\n  value: info",
        ],
    ),
    "ecs-env-value": (
        "name-value-pair",
        pw,
        [
            '"environment": [{{"name": "DB_PASSWORD", "value": "{s}"}}]',
            '{{"name":"API_TOKEN","value":"{s}"}}',
        ],
    ),
    "cfn-parameter-value": (
        "name-value-pair",
        pw,
        [
            "aws cloudformation deploy --parameter-overrides "
            "ParameterKey=DbPassword,ParameterValue={s}",
            '[{{"ParameterKey": "MasterUserPassword", "ParameterValue": "{s}"}}]',
        ],
    ),
    "aws-secret-adjacent": (
        "key-id-adjacency",
        aws_secret,
        [
            "User name,Access key ID,Secret access key\nci-bot,{i},{s}",
            "s3 = boto3.client('s3', '{i}', '{s}')",
            "{i} {s}",
            "keys: {i} / {s}",
            "[default]\n{i}\n{s}",
        ],
    ),
    "alibaba-secret-adjacent": (
        "key-id-adjacency",
        lambda: rs(A, 30),
        ["AccessKeyId: {i}\nAccessKeySecret: {s}", "aliyun configure set --access-key-id {i} {s}"],
    ),
    "tencent-secret-adjacent": (
        "key-id-adjacency",
        lambda: rs(A, 32),
        ["SecretId={i}, SecretKey={s}", 'credential.Credential("{i}", "{s}")'],
    ),
    "gcs-hmac-secret-adjacent": (
        "key-id-adjacency",
        lambda: rs(B64, 40),
        ["gsutil hmac: access id {i} secret {s}", "HMAC key {i}:{s}"],
    ),
    "twilio-auth-token-adjacent": (
        "key-id-adjacency",
        lambda: rs(HEX, 32),
        ["client = Client('{i}', '{s}')", "TWILIO={i}:{s}"],
    ),
    "discord-bot-token-bare": (
        "chat-bot-token",
        discord_bot,
        [
            "client.run('{s}')",
            "TOKEN={s}",
            '{{"token": "{s}", "prefix": "!"}}',
            "starting with {s}",
        ],
    ),
    "telegram-bot-token-bare": (
        "chat-bot-token",
        telegram,
        [
            "updater = Updater('{s}')",
            "BOT={s}",
            '"tg": {{"key": "{s}"}}',
            "wget -qO- https://api.example.org/relay?to={s}",
        ],
    ),
    "query-appid": (
        "query-param",
        lambda: rs(HEX, 32),
        [
            "https://api.openweathermap.org/data/2.5/weather?q=Paris&appid={s}",
            "GET /forecast?appid={s}&units=metric 200",
        ],
    ),
    "query-key": (
        "query-param",
        lambda: rs(A, R.randint(24, 40)),
        [
            "https://api.acme.dev/v2/search?q=shoes&key={s}",
            "fetch(`${{base}}/items?key={s}&limit=20`)",
        ],
    ),
    "query-access-token": (
        "query-param",
        lambda: rs(URLSAFE + ".", R.randint(40, 80)),
        [
            "https://graph.acme.dev/me?fields=id,name&access_token={s}",
            "wss://stream.acme.dev/socket?token={s}",
            "redirect to https://app.acme.dev/cb#access_token={s}&token_type=bearer",
        ],
    ),
    "query-sig": (
        "query-param",
        lambda: rs(A, 43) + "%3D",
        [
            "https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r"
            "&se=2026-12-01T00:00:00Z&sig={s}",
            "?sp=racwdl&st=2026-11-01&se=2026-12-01&spr=https&sv=2022-11-02&sr=c&sig={s}",
        ],
    ),
    "query-api-key": (
        "query-param",
        lambda: rs(HEX, 32),
        [
            "https://api.acme.dev/v1/quote?symbol=ACME&api_key={s}",
            "curl 'https://maps.acme.dev/geo?apikey={s}&q=Berlin'",
        ],
    ),
    "prose-password": (
        "prose-password",
        pw,
        [
            "my db password={s}",
            "password: {s}",
            "The staging admin password is {s} (rotate after the demo)",
            "wifi: guest / password {s}",
            "Use password={s} for the read replica",
        ],
    ),
    "xml-element-secret": (
        "key-value",
        pw,
        [
            "<server>\n  <id>nexus</id>\n  <username>{u}</username>\n"
            "  <password>{s}</password>\n</server>",
            '<add key="ApiSecret" value="{s}" />',
            "<apiToken>{s}</apiToken>",
        ],
    ),
    "connection-string-kv": (
        "key-value",
        pw,
        [
            "Server={h};Database=shop;User Id={u};Password={s};TrustServerCertificate=True",
            "Driver={{ODBC Driver 18}};Server={h};UID={u};PWD={s};Encrypt=yes",
            'psql "host={h} port=5432 dbname=shop user={u} password={s}"',
        ],
    ),
    "npmrc-auth": (
        "key-value",
        lambda: b64(f"{user()}:{pw()}"),
        ["//registry.acme.dev/:_auth={s}", "_auth = {s}\nalways-auth = true"],
    ),
    "netrc-password": (
        "key-value",
        pw,
        [
            "machine api.acme.dev login {u} password {s}",
            "machine git.acme.dev\n  login {u}\n  password {s}",
        ],
    ),
    "code-assignment-secret": (
        "key-value",
        lambda: rs(A + "-_", R.randint(24, 40)),
        [
            'apikey := "{s}"',
            'private_key "{s}";',
            'some_dict["secret"] = "{s}"',
            'NSString *apiKey = @"{s}";',
            "config[:auth_token] = '{s}'",
        ],
    ),
    "kubectl-from-literal": (
        "cli-password",
        pw,
        [
            "kubectl create secret generic db --from-literal=password={s}",
            "kubectl create secret generic api --from-literal=API_TOKEN={s} -n prod",
        ],
    ),
    "prefixed-vendor-token": (
        "vendor-prefix",
        lambda: R.choice(
            [
                "sk-or-v1-" + rs(HEX, 64),
                "dp.st.prd." + rs(A, 43),
                "PMAK-" + rs(HEX, 24) + "-" + rs(HEX, 34),
                "glsa_" + rs(A, 32) + "_" + rs(HEX, 8),
                "ATATT3xFfGF0" + rs(URLSAFE, 180),
                "tskey-auth-" + rs(A, 12) + "CNTRL-" + rs(A, 33),
                "figd_" + rs(URLSAFE, 40),
                "NRAK-" + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 27),
                "pul-" + rs(HEX, 40),
                "sbp_" + rs(HEX, 40),
                "ops_" + rs(URLSAFE, 60),
                "ya29." + rs(URLSAFE, 120),
            ]
        ),
        [
            "token loaded: {s}",
            "export SERVICE_CRED={s}",
            '{{"credential": "{s}"}}',
            "Authorization header was {s}",
        ],
    ),
}

CASE_COUNTS = {"prefixed-vendor-token": 16}
PER_KIND = 5


def id_for(kind: str) -> str:
    """A key id of the vendor the kind names (the `{i}` of its templates)."""
    if kind.startswith("aws"):
        return aws_id()
    if kind.startswith("alibaba"):
        return "LTAI" + rs(A, 20)
    if kind.startswith("tencent"):
        return "AKID" + rs(A, 32)
    if kind.startswith("gcs"):
        return "GOOG1E" + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 55)
    if kind.startswith("twilio"):
        return "AC" + rs(HEX, 32)
    return ""


def secrets() -> list[dict[str, str]]:
    rows = []
    for kind, (family, gen, templates) in CASES.items():
        for i in range(CASE_COUNTS.get(kind, PER_KIND)):
            s = gen()
            text = templates[i % len(templates)].format(s=s, u=user(), h=host(), i=id_for(kind))
            rows.append({"kind": kind, "family": family, "text": text, "secret": s})
    return rows
