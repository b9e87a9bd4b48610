"""`verify` reads what ways itself wrote (issue 35 item 4): a chained rule's file in
each mapped format a file keeps (ocsf, ecs) verifies as its json twin does, intact and
signed where intact, with the same break where tampered. One real session, one
dispatcher, three file targets (verify/formats.py unwraps each line's record)."""

from __future__ import annotations

import json

import pytest

from ..conftest import ALL_SECTIONS, payload
from ..helpers import spool_directly
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
