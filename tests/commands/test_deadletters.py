"""`ways deadletters` against records the real hook and detached dispatcher parked:
replay through the rule's current target, in order, keeping what is not accepted,
and the chained file verifying afterwards; drop by session, counted in events.log."""

from __future__ import annotations

import json

from ways_sensors.errors import NOT_CONFIRMED, NOT_DELIVERED

from ..helpers import dispatcher_done, lines, status, wait_until
from ..servers import Server
from ..sessions import SID, ScriptedSession


def sensor(install, dispatch: str) -> None:
    install.sensor(
        "remote",
        f"""\
        rules:
          prompts:
            sections: [user_prompt, tool_call, tool_result, session_end]
            delivery: at_least_once
            chain: true
            dispatch: {dispatch}
        """,
    )


def listed(install) -> list[dict]:
    r = install.ways("deadletters", "list", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def parked(install) -> list[dict]:
    r = install.ways("deadletters", "show", "remote/prompts", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def park_a_session(install, tmp_path) -> list[dict]:
    ScriptedSession(install, tmp_path / "t").play()
    assert wait_until(lambda: dispatcher_done(install, SID), timeout=120)
    got = parked(install)
    assert len(got) >= 6 and {x["session"] for x in got} == {SID}
    return got


def test_replay_delivers_in_order_once_the_consumer_is_fixed_and_the_chain_verifies(
    install, tmp_path
):
    out = tmp_path / "out.jsonl"
    out.mkdir()  # a file path that is a folder: refused for good, every record parked
    sensor(install, f"{{file: {{path: '{out}'}}}}")
    before = park_a_session(install, tmp_path)
    assert any(x["record"]["section"] == "checkpoint" for x in before)
    [row] = listed(install)
    assert row["rule"] == "remote/prompts" and row["records"] == len(before)
    assert row["sessions"] == 1 and sum(row["reasons"].values()) == len(before)

    # still broken: nothing delivered, nothing removed, exit 7 naming why
    r = install.ways("deadletters", "replay", "remote/prompts")
    assert r.returncode == NOT_DELIVERED, r.stdout + r.stderr
    assert f"0 delivered, {len(before)} kept" in r.stdout
    assert parked(install) == before

    out.rmdir()  # fixed
    r = install.ways("deadletters", "replay", "remote/prompts", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    [res] = json.loads(r.stdout)
    assert res == {
        "rule": "remote/prompts",
        "delivered": len(before),
        "unconfirmed": 0,
        "kept": 0,
        "failed": None,
        "removed": True,
    }
    assert lines(out) == [x["record"] for x in before]  # in the order parked
    v = install.ways("sensors", "verify", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    assert listed(install) == [] and status(install)["dead_letters"] == []
    assert install.ways("status").returncode == 0  # healthy again


def test_replay_keeps_what_is_not_accepted_and_drop_removes_a_session(install, tmp_path):
    server = Server("script", script=[(400, {})] * 500)
    try:
        sensor(install, f"{{http: {{url: '{server.url}'}}}}")
        before = park_a_session(install, tmp_path)
        server.script[:] = [(200, {}), (200, {}), (503, {})]  # two pass, then it fails
        r = install.ways("deadletters", "replay", "--json")
        assert r.returncode == NOT_DELIVERED
        [res] = json.loads(r.stdout)
        assert res["delivered"] == 2 and res["kept"] == len(before) - 2
        assert res["failed"].startswith("refused: HTTP 503")
        assert server.bodies == [x["record"] for x in before[:2]]
        assert parked(install) == before[2:]  # only the accepted ones removed

        assert install.ways("deadletters", "drop", "--session", "other").returncode == 0
        assert parked(install) == before[2:]
        d = install.ways("deadletters", "drop", "remote/prompts", "--session", SID)
        assert d.returncode == 0 and f"{len(before) - 2} record(s) dropped" in d.stdout
        assert listed(install) == []
    finally:
        server.close()
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    dropped = [e for e in log if e["kind"] == "dead_letter.dropped" and e["records"]]
    assert [(e["rule"], e["records"]) for e in dropped] == [("prompts", len(before) - 2)]
    replayed = [e for e in log if e["kind"] == "dead_letter.replayed"]
    assert [(e["delivered"], e["kept"]) for e in replayed] == [(2, len(before) - 2)]


def test_replay_of_a_rule_that_is_gone_is_refused_and_keeps_everything(install, tmp_path):
    out = tmp_path / "out.jsonl"
    out.mkdir()
    path = install.user_sensors / "remote.yaml"
    sensor(install, f"{{file: {{path: '{out}'}}}}")
    before = park_a_session(install, tmp_path)
    path.unlink()
    r = install.ways("deadletters", "replay", "remote/prompts")
    assert r.returncode == 2 and "no rule remote/prompts is configured" in r.stderr
    assert parked(install) == before


def test_replay_over_udp_sends_each_record_once_and_keeps_them_all(install, tmp_path):
    """UDP cannot say a record arrived: replay sends every parked record, removes none
    and exits NOT_CONFIRMED, so nothing it could not deliver is dropped."""
    import socket

    out = tmp_path / "out.jsonl"
    out.mkdir()
    sensor(install, f"{{file: {{path: '{out}'}}}}")
    before = park_a_session(install, tmp_path)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(30)
        port = sock.getsockname()[1]
        sensor(install, f"{{syslog: {{host: 127.0.0.1, port: {port}, protocol: udp}}}}")
        r = install.ways("deadletters", "replay", "remote/prompts", "--json")
        got = [sock.recv(65535) for _ in before]
    assert r.returncode == NOT_CONFIRMED, r.stdout + r.stderr
    [res] = json.loads(r.stdout)
    assert (res["delivered"], res["unconfirmed"], res["kept"]) == (0, len(before), len(before))
    assert res["failed"] is None
    hashes = [
        b'"hash":"' + x["record"]["chain"]["hash"].encode()
        for x in before
        if "chain" in x["record"]
    ]
    where = [[i for i, g in enumerate(got) if h in g] for h in hashes]
    assert hashes and all(len(w) == 1 for w in where)  # each chained record sent once
    assert len({w[0] for w in where}) == len(hashes)  # in a datagram of its own
    assert parked(install) == before  # all kept
    r = install.ways("deadletters", "replay", "remote/prompts")
    assert r.returncode == NOT_CONFIRMED
    assert "sent unconfirmed and kept" in r.stdout
