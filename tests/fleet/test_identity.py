"""The identity on every record of every target: a session through the real hook and
detached dispatcher to a file, an HTTP consumer, a command, an OTLP receiver and a real
rsyslogd, with `ways.identity` from the managed config.yaml (a static team, an
${ENV} email, a command giving the display name and groups); a blocking rule's record
carries it too."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from ..conftest import payload
from ..helpers import SESSION, dispatcher_done, lines, play, wait_until
from ..rsyslog import SD_ID, Rsyslog
from ..servers import Server

IDENTITY_COMMAND = (
    "import json; print(json.dumps({'name': 'Dana Dev', 'groups': ['eng', 'sre'],"
    " 'team': 'overridden by the config'}))"
)


def machine_id() -> str | None:
    try:
        return Path("/etc/machine-id").read_text().strip() or None
    except OSError:
        return None


@pytest.fixture
def fleet(install, tmp_path):
    managed = tmp_path / "xdg" / "agent-ways"
    managed.mkdir(parents=True)
    (managed / "config.yaml").write_text(
        "locked: [ways.identity]\n"
        "ways:\n"
        "  identity:\n"
        "    email: ${CORP_EMAIL}\n"
        "    team: platform\n"
        f'    command: [{sys.executable}, -c, "{IDENTITY_COMMAND}"]\n'
    )
    install.env["XDG_CONFIG_DIRS"] = str(tmp_path / "xdg")
    install.env["CORP_EMAIL"] = "dana@corp.example"
    return install


def check(identity: dict, install) -> None:
    user = identity["user"]
    assert user["email"] == "dana@corp.example"
    assert user["team"] == "platform"  # the config's word over the command's
    assert user["name"] == "Dana Dev" and user["groups"] == ["eng", "sre"]
    assert user["id"]  # the login name
    stored = (install.state_root / "install_id").read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{32}", stored) and identity["install_id"] == stored
    assert identity["host"]["name"]
    assert identity["host"].get("id") == machine_id()


def test_every_target_carries_the_identity(fleet, tmp_path):
    install = fleet
    out = tmp_path / "records.jsonl"
    piped = tmp_path / "piped.jsonl"
    http, otlp = Server("accept"), Server("otlp")
    syslog = Rsyslog(tmp_path / "rsyslog", "tcp")
    sink = f"import sys; open({str(piped)!r}, 'ab').write(sys.stdin.buffer.read())"
    try:
        install.sensor(
            "all",
            f"""
            rules:
              file:
                sections: [tool_call]
                dispatch: {{file: {{path: "{out}"}}}}
              http:
                sections: [tool_call]
                dispatch: {{http: {{url: "{http.url}"}}}}
              command:
                sections: [tool_call]
                dispatch: {{command: {{argv: ["{sys.executable}", "-c", "{sink}"]}}}}
              otlp:
                sections: [tool_call]
                dispatch: {{otlp: {{endpoint: "http://127.0.0.1:{otlp.port}"}}}}
              syslog:
                sections: [tool_call]
                dispatch: {{syslog: {{host: 127.0.0.1, port: {syslog.port}}}}}
            """,
        )
        play(install, SESSION)
        assert wait_until(lambda: dispatcher_done(install), timeout=60)
        calls = sum(1 for n in SESSION if n.startswith("PreToolUse"))
        for rec in lines(out):
            check(rec["identity"], install)
        assert len(lines(out)) == calls
        bodies = http.wait_for(calls)
        assert len(bodies) == calls
        for body in bodies:
            check(body["identity"], install)
        assert wait_until(lambda: piped.exists() and len(lines(piped)) == calls)
        for rec in lines(piped):
            check(rec["identity"], install)
        otlp.wait_for(1)
        for request in otlp.bodies:
            for rl in request["resourceLogs"]:
                attrs = {a["key"]: a["value"] for a in rl["resource"]["attributes"]}
                assert attrs["user.id"] == attrs["enduser.id"]
                assert attrs["user.email"] == {"stringValue": "dana@corp.example"}
                assert attrs["user.full_name"] == {"stringValue": "Dana Dev"}
                roles = [v["stringValue"] for v in attrs["user.roles"]["arrayValue"]["values"]]
                assert roles == ["eng", "sre"]
                if machine_id():
                    assert attrs["host.id"] == {"stringValue": machine_id()}
                for lr in rl["scopeLogs"][0]["logRecords"]:
                    check(json.loads(lr["body"]["stringValue"])["identity"], install)
        msgs = syslog.wait_for(calls)
        assert len(msgs) == calls
        for m in msgs:
            sd = json.loads(m["sd"])[SD_ID]
            record = json.loads(m["msg"])
            check(record["identity"], install)
            assert sd["user_email"] == "dana@corp.example"
            assert sd["install_id"] == record["identity"]["install_id"]
            assert sd["user"] == record["identity"]["user"]["id"]
    finally:
        http.close()
        otlp.close()
        syslog.close()


def test_a_blocking_rule_carries_what_the_dispatcher_resolved(fleet, tmp_path):
    install = fleet
    first, out = tmp_path / "async.jsonl", tmp_path / "blocking.jsonl"
    install.sensor(
        "a",
        f"rules:\n  r:\n    sections: [session_start]\n"
        f"    dispatch: {{file: {{path: '{first}'}}}}\n",
    )
    play(install, ["SessionStart"])
    assert wait_until(lambda: first.exists() and lines(first))
    install.sensor(
        "b",
        f"rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    assert install.hook(payload("PreToolUse")).returncode == 0
    [rec] = lines(out)
    check(rec["identity"], install)


def test_a_failing_identity_command_is_logged_and_the_rest_kept(install, tmp_path):
    out = tmp_path / "out.jsonl"
    failing = f"[{sys.executable}, -c, 'raise SystemExit(4)']"
    install.config(f"ways:\n  identity:\n    team: qa\n    command: {failing}\n")
    install.sensor(
        "a",
        f"rules:\n  r:\n    sections: [session_start]\n    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    play(install, ["SessionStart"])
    assert wait_until(lambda: out.exists() and lines(out))
    user = lines(out)[0]["identity"]["user"]
    assert user["team"] == "qa" and "name" not in user
    log = (install.state_root / "events.log").read_text()
    assert "identity.command_failed" in log and "exit 4" in log
