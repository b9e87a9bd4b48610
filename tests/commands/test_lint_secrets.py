"""A literal secret in a command's argv: `ways sensors lint` warns about it, and no
human output (lint's warnings, `ways sensors list`, its --json) quotes a token."""

from __future__ import annotations

import json

GH = "ghp_" + "Zq8Lm2Pw4Rt6Yu1Io3Kj5Hg7Fd9Sa0Xc2Vb4"
PLAIN = "f3a9c1d7e5b2a8c4d6e0f1a3b5c7d9e2"  # a random-looking value, no vendor prefix
URL_KEY = "AbCdEf1234567890GhIjKlMn"


def test_argv_secrets_are_flagged_and_never_shown(install):
    install.sensor(
        "leaky",
        f"""\
        rules:
          cmd:
            sections: [tool_call]
            dispatch:
              command:
                argv: [curl, -H, "Authorization: Bearer {GH}", --api-token, "{PLAIN}", https://x.example]
          fine:
            sections: [tool_call]
            dispatch:
              command:
                argv: [logger, -t, agent-risk]
                env: {{TOKEN: "${{AUDIT_TOKEN}}"}}
          hook:
            sections: [tool_call]
            fields: metadata
            dispatch: {{http: {{url: "https://collector.example/in?api_key={URL_KEY}"}}}}
        """,
    )
    r = install.ways("sensors", "lint")
    out = r.stdout + r.stderr
    assert "leaky/cmd" in out or "cmd" in out
    assert "argv[2] holds a literal secret" in out and "argv[4] holds a literal secret" in out
    assert out.count("holds a literal secret") == 2  # `fine` passes its token through env
    assert "may send session content off this machine" in out  # the warning is still there
    for shown in (
        out,
        install.ways("sensors", "list").stdout,
        install.ways("sensors", "list", "--json").stdout,
        install.ways("sensors", "lint", "--json").stdout,
    ):
        assert GH not in shown and PLAIN not in shown and URL_KEY not in shown
        assert GH[:12] not in shown
    rows = {
        r["name"]: r
        for s in json.loads(install.ways("sensors", "list", "--json").stdout)["sensors"]
        for r in s["rules"]
    }
    assert "[secret]" in rows["cmd"]["destination"]
    assert rows["cmd"]["destination"].startswith("command curl -H")
    assert rows["fine"]["destination"] == "command logger -t agent-risk"
    assert "collector.example" in rows["hook"]["destination"]
