"""`verify` reads what ways itself wrote (issue 35 item 4): a chained rule's output in
each format (json, ocsf and ecs files; syslog as a real rsyslogd stored it; splunk_hec
as a loopback HEC accepted it) verifies as the json file does, intact and signed where
intact, with the same break where tampered (verify/formats.py unwraps each line's
record). Real dispatchers and consumers throughout."""

from __future__ import annotations

import json

import pytest

from ..conftest import ALL_SECTIONS, payload
from ..hec_server import Hec
from ..helpers import spool_directly, wait_until
from ..rsyslog import Rsyslog
from .runs import calls, dispatch, root_vkey

SECTIONS = ", ".join(ALL_SECTIONS)
FORMATS = ("json", "ocsf", "ecs")  # splunk_hec is the http target's alone


@pytest.fixture
def written(install, tmp_path):
    rules = "".join(
        f"  {f}:\n    sections: [{SECTIONS}]\n    chain: true\n    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{tmp_path / f}.jsonl', format: {f}}}}}\n"
        for f in FORMATS
    )
    install.sensor("kept", "rules:\n" + rules)
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 6)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    return install, {f: tmp_path / f"{f}.jsonl" for f in FORMATS}


def verify(install, path, *more: str) -> tuple[int, dict]:
    r = install.ways("sensors", "verify", str(path), "--json", *more)
    return r.returncode, json.loads(r.stdout)


def test_every_format_ways_writes_verifies_intact_and_signed(written):
    install, paths = written
    vkey = root_vkey(install)
    for f, path in paths.items():
        assert path.read_text().count("\n") >= 9, f
        code, data = verify(install, path, "--key", vkey)
        assert code == 0, (f, data.get("break"), data.get("evidence", {}).get("breaks"))
        assert data["records"] == 8, f
        [tree] = data["evidence"]["trees"]
        assert tree["records"] == 8 and tree["rule"] == f


def test_a_tampered_record_is_the_same_break_in_every_format(written):
    install, paths = written
    kinds = {}
    for f, path in paths.items():
        text = path.read_text()
        edited = text.replace("toolu_0003", "toolu_9999")  # the record and any copy of it
        assert edited != text, f
        path.write_text(edited)
        code, data = verify(install, path)
        kinds[f] = (code, data["break"]["kind"], data["break"]["rule_seq"])
    assert set(kinds.values()) == {(3, "edited", 5)}, kinds


def test_what_rsyslog_stored_from_a_syslog_rule_verifies(install, tmp_path):
    """A chained syslog rule into a real rsyslogd (tests/rsyslog.py), stored in its
    documented file format: `verify --key` reads the records and checkpoints inside the
    lines, intact and signed; an edit is the same break as in a json file."""
    server = Rsyslog(tmp_path / "rsyslog")
    try:
        install.sensor(
            "kept",
            f"rules:\n  siem:\n    sections: [{SECTIONS}]\n    chain: true\n"
            "    delivery: at_least_once\n"
            f"    dispatch: {{syslog: {{host: 127.0.0.1, port: {server.port}}}}}\n",
        )
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 6)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        assert wait_until(
            lambda: server.stored.exists() and '"end":true' in server.stored.read_text()
        )
    finally:
        server.close()
    stored = server.stored
    code, data = verify(install, stored, "--key", root_vkey(install))
    assert code == 0, (data.get("break"), data.get("evidence", {}).get("breaks"))
    assert data["records"] == 8 and data["evidence"]["trees"][0]["records"] == 8
    stored.write_text(stored.read_text().replace("toolu_0003", "toolu_9999"))
    code, data = verify(install, stored)
    assert (code, data["break"]["kind"], data["break"]["rule_seq"]) == (3, "edited", 5)


def test_what_a_hec_collector_received_verifies(install, tmp_path):
    """A chained rule's `format: splunk_hec` over the http target into the loopback HEC
    (tests/hec_server.py): its accepted event objects, one a line as a store keeps them,
    verify with --key; an edit is the json file's break."""
    hec = Hec()
    try:
        install.sensor(
            "kept",
            f"rules:\n  hec:\n    sections: [{SECTIONS}]\n    chain: true\n"
            "    delivery: at_least_once\n"
            f"    dispatch: {{http: {{url: '{hec.url}', format: splunk_hec, "
            f"headers: {{Authorization: 'Splunk {hec.token}'}}}}}}\n",
        )
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 6)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        assert wait_until(lambda: any(e["event"].get("end") for e in hec.events))
        assert not hec.problems, hec.problems
        events = list(hec.events)
    finally:
        hec.close()
    kept = tmp_path / "hec-events.jsonl"
    kept.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, data = verify(install, kept, "--key", root_vkey(install))
    assert code == 0, (data.get("break"), data.get("evidence", {}).get("breaks"))
    assert data["records"] == 8 and data["evidence"]["trees"][0]["records"] == 8
    kept.write_text(kept.read_text().replace("toolu_0003", "toolu_9999"))
    code, data = verify(install, kept)
    assert (code, data["break"]["kind"], data["break"]["rule_seq"]) == (3, "edited", 5)
