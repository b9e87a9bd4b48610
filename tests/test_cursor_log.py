"""Every rule's cursor in one log per session (cursorlog.py; issue 22, defect 21): the
files a session keeps at rest do not grow with its rules, and the crash guarantees of
cursor.py hold across SIGKILLs with several rules, through the wired hook and the
detached dispatcher; an older version's cursor files are migrated with their pending
batch; a commit's cost stays one line, whatever the number of rules.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time

import psutil

from .conftest import payload
from .helpers import (
    SID,
    cursor_of,
    dispatcher_pid,
    lines,
    no_checkpoints,
    sections_list,
    spool_directly,
    start_dispatcher,
    wait_until,
)


def call(install, n: int, sid: str = SID) -> None:
    p = {**payload("PreToolUse"), "session_id": sid, "tool_use_id": f"toolu_{n:05d}"}
    r = install.hook(p)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def cursor_files(install, sid: str = SID) -> list[str]:
    return sorted(os.listdir(install.sessions() / sid / "cursors"))


def test_a_session_with_many_rules_keeps_one_cursor_file_at_rest(install, tmp_path):
    rules = 200
    out = tmp_path / "out"
    body = ["rules:"]
    for i in range(rules):
        body += [
            f"  r{i:03d}:",
            "    sections: [tool_call]",
            "    timeout: 60s",
            f"    dispatch: {{file: {{path: '{out}/r{i:03d}.jsonl'}}}}",
        ]
    install.sensor("many", "\n".join(body) + "\n")

    def delivered(n: int) -> bool:
        return all(len(lines(out / f"r{i:03d}.jsonl")) == n for i in range(rules))

    for n in range(1, 4):
        call(install, n)
        assert wait_until(lambda n=n: delivered(n), timeout=120)
        # at rest: the log alone (a batch file exists only while its batch is in flight)
        assert wait_until(lambda: cursor_files(install) == ["cursors.log"], timeout=30), (
            cursor_files(install)[:5]
        )
    from ways_sensors.state.cursorread import read_states

    states = read_states(str(install.sessions() / SID / "cursors"))
    assert len(states) == rules
    assert {st["rule_seq"] for st in states.values()} == {3}
    assert not any(st["batch"] for st in states.values())


def sensors(install, tmp_path, names: list[str]) -> None:
    for name in names:
        out = tmp_path / f"{name}.jsonl"
        consumer = f"sleep 0.02; cat >> '{out}'"  # a kill often lands mid-attempt
        target = (
            f'{{command: {{argv: [sh, -c, "{consumer}"]}}}}'
            if name == "slow"
            else f"{{file: {{path: '{out}'}}}}"
        )
        install.sensor(
            name,
            f"""\
            rules:
              all:
                sections: {sections_list()}
                delivery: at_least_once
                chain: true
                batch: {{max_records: 7}}
                timeout: 30s
                dispatch: {target}
            """,
        )


def check_complete(got: list[dict], last: int) -> None:
    by_seq: dict[int, dict] = {}
    for r in got:  # a re-delivery is the same record: same seq, same hash, same content
        assert by_seq.setdefault(r["rule_seq"], r) == r
    assert set(by_seq) == set(range(1, last + 1)), sorted(set(range(1, last + 1)) - set(by_seq))
    prev = "0" * 64
    for s in range(1, last + 1):
        assert by_seq[s]["chain"]["prev"] == prev
        prev = by_seq[s]["chain"]["hash"]


def test_sigkills_during_delivery_with_several_rules_lose_and_alter_nothing(install, tmp_path):
    names = ["one", "two", "slow"]
    sensors(install, tmp_path, names)
    r = install.hook(payload("SessionStart"))  # the hook starts the detached dispatcher
    assert r.returncode == 0
    base = payload("PreToolUse")
    calls = [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:05d}"}) for i in range(600)]
    rnd = random.Random(20261203)
    kills, sent = 0, 0
    while sent < len(calls):
        spool_directly(install, calls[sent : sent + 60])
        sent += 60
        call(install, 10_000 + sent)  # the hook: restarts the dispatcher after a kill
        time.sleep(rnd.uniform(0.05, 0.3))
        pid = dispatcher_pid(install)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            kills += 1
            assert wait_until(lambda pid=pid: not psutil.pid_exists(pid) or _zombie(pid))
    assert install.hook(payload("SessionEnd")).returncode == 0
    last = 2 + len(calls) + len(calls) // 60  # start, the calls, the hook's own, end

    def done() -> bool:
        return all(
            max((x["rule_seq"] for x in no_checkpoints(lines(tmp_path / f"{n}.jsonl"))), default=0)
            >= last
            for n in names
        )

    assert wait_until(done, timeout=240)
    assert kills >= 5
    for n in names:
        check_complete(no_checkpoints(lines(tmp_path / f"{n}.jsonl")), last)
    for n in names:  # verify agrees: duplicates of a re-sent batch, nothing else
        r = install.ways("sensors", "verify", str(tmp_path / f"{n}.jsonl"), "--rule", f"{n}/all")
        assert r.returncode == 0, r.stdout


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def test_an_older_versions_cursor_files_are_migrated_with_their_pending_batch(install, tmp_path):
    up, out = tmp_path / "up", tmp_path / "owed.jsonl"
    consumer = f"test -f '{up}' && cat >> '{out}'"  # refuses until `up` exists
    install.sensor(
        "owed",
        f"""\
        rules:
          r:
            sections: {sections_list()}
            delivery: at_least_once
            chain: true
            timeout: 5s
            dispatch: {{command: {{argv: [sh, -c, "{consumer}"]}}}}
        """,
    )
    spool_directly(install, [("SessionStart", payload("SessionStart"))])
    spool_directly(install, [(e, {**payload(e), "tool_use_id": "toolu_1"}) for e in ["PreToolUse"]])
    proc = start_dispatcher(install)
    assert wait_until(lambda: (cursor_of(install, "owed.r") or {}).get("pending"))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # what an older version would have left: `cursors/<key>.json`, the batch inline
    folder = install.sessions() / SID / "cursors"
    st = cursor_of(install, "owed.r")
    pending = st["pending"]
    for name in os.listdir(folder):
        if name == "cursors.log" or name.endswith(".batch"):
            os.unlink(folder / name)
    st.pop("batch", None)
    (folder / "owed.r.json").write_text(json.dumps(st))
    os.chmod(folder / "owed.r.json", 0o600)

    up.touch()
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    proc = start_dispatcher(install)
    assert proc.wait(timeout=120) == 0
    got = no_checkpoints(lines(out))
    # the batch pending in the old file goes out first, as it was numbered and chained
    assert got[: len(no_checkpoints(pending))] == no_checkpoints(pending)
    check_complete(got, 3)


def test_a_commit_writes_one_line_whatever_the_number_of_rules(tmp_path):
    """2,000 rules committing 5 times each: the bytes written (the kernel's own count,
    /proc/self/io `wchar`) stay linear in the commits, compaction included."""
    from ways_sensors.state.cursorlog import COMPACT_FLOOR, CursorLog
    from ways_sensors.state.cursorread import read_states

    root = tmp_path / "state"
    folder = root / "sessions" / "s" / "cursors"
    log = CursorLog(str(folder), str(root))
    rules, rounds = 2000, 5
    st = {"active": True, "segment": "0000000001.seg", "offset": 0, "rule_seq": 0}
    st |= {"hash": "0" * 64, "finished_as": None, "pending": None}
    for i in range(rules):
        log.load(f"s.r{i}")
    before = _wchar()
    for n in range(rounds):
        for i in range(rules):
            log.save(f"s.r{i}", {**st, "offset": n, "rule_seq": n}, lambda: b"")
    written = _wchar() - before
    line = len(json.dumps({"rule": "s.r1999", **st, "batch": None}, separators=(",", ":")))
    assert written < 3 * rules * rounds * (line + 1)  # the lines, and compactions at most as much
    size = os.path.getsize(folder / "cursors.log")
    assert size <= max(COMPACT_FLOOR, 2 * rules * (line + 1))
    states = read_states(str(folder))
    assert len(states) == rules and {s["rule_seq"] for s in states.values()} == {rounds - 1}


def _wchar() -> int:
    with open("/proc/self/io") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("wchar:"))


def test_opening_the_log_repairs_a_torn_tail_and_removes_orphans(tmp_path):
    """What a SIGKILL can leave (cursorlog.py): a torn last line, a batch file no line
    names (killed before its line, or before the unlink after the line that cleared
    it), a compaction's temporary file; and an older version's `<key>.json`. The next
    dispatcher's opening keeps the last whole line of each rule and the batch it names,
    and leaves nothing else behind."""
    from ways_sensors.state.cursorlog import CursorLog

    root = tmp_path / "state"
    folder = root / "sessions" / "s" / "cursors"
    folder.mkdir(parents=True, mode=0o700)
    for p in (root, root / "sessions", root / "sessions" / "s"):
        p.chmod(0o700)
    rec = {"rule_seq": 2, "data": "pending"}
    (folder / "s.a.aaaaaaaaaaaa.batch").write_text(json.dumps(rec) + "\n")  # named: kept
    (folder / "s.a.bbbbbbbbbbbb.batch").write_text(json.dumps(rec) + "\n")  # an orphan
    (folder / ".cursors.log.0123456789ab.tmp").write_text("x")  # a compaction cut short
    head = {"active": True, "segment": "0000000001.seg", "offset": 10, "hash": "0" * 64}
    lines = [
        {"rule": "s.a", **head, "rule_seq": 1, "batch": None},
        {"rule": "s.a", **head, "rule_seq": 2, "batch": "aaaaaaaaaaaa"},
    ]
    torn = json.dumps({"rule": "s.a", **head, "rule_seq": 3, "batch": None})[:40]
    (folder / "cursors.log").write_text("".join(json.dumps(x) + "\n" for x in lines) + torn)
    legacy = {**head, "rule_seq": 7, "pending": {"rule_seq": 7, "data": "old"}}
    (folder / "s.b.json").write_text(json.dumps(legacy))  # before batching: one record
    for p in folder.iterdir():
        p.chmod(0o600)

    log = CursorLog(str(folder), str(root))
    a, b = log.load("s.a"), log.load("s.b")
    assert (a["rule_seq"], a["pending"]) == (2, [rec])
    assert (b["rule_seq"], b["pending"]) == (7, [legacy["pending"]])
    names = sorted(os.listdir(folder))
    assert names[0] == "cursors.log" and len(names) == 3, names  # the log, two batches
    assert "s.a.aaaaaaaaaaaa.batch" in names and "s.a.bbbbbbbbbbbb.batch" not in names
    raw = (folder / "cursors.log").read_bytes()
    assert raw.endswith(b"\n") and torn.encode() not in raw  # a next line never joins it
    log.save("s.a", {**a, "pending": None}, lambda: b"")  # delivered: its batch goes
    assert "s.a.aaaaaaaaaaaa.batch" not in os.listdir(folder)
    log.close()
    again = CursorLog(str(folder), str(root))
    assert again.load("s.a")["pending"] is None and again.load("s.b")["pending"] == b["pending"]


def test_a_line_the_untyped_cursor_wrote_loads_and_saves_back_as_the_same_bytes(tmp_path):
    """A state root from before the typed cursor (state/cursorstate.py): its log line,
    pending batch and all, loads into a Cursor, and saved again unchanged it is the same
    bytes, naming the same batch file (no rewrite of a batch in flight)."""
    from ways_sensors.dispatch.cursor import load_cursor
    from ways_sensors.state.cursorlog import CursorLog

    root = tmp_path / "state"
    folder = root / "sessions" / "s" / "cursors"
    folder.mkdir(parents=True, mode=0o700)
    for p in (root, root / "sessions", root / "sessions" / "s"):
        p.chmod(0o700)
    tree = '{"size":3,"epoch":0,"witness":{"https://w.example":2},"signed":2,"ended":false}'
    line = (
        '{"rule":"s.a","rule_seq":3,"hash":"' + "ab" * 32 + '","segment":"0000000002.seg",'
        '"offset":120,"active":true,"tree":' + tree + ',"finished_as":"0123456789abcdef",'
        '"batch":"aaaaaaaaaaaa"}\n'
    ).encode()
    rec = {"rule_seq": 3, "data": "pending"}
    (folder / "cursors.log").write_bytes(line)
    (folder / "s.a.aaaaaaaaaaaa.batch").write_text(json.dumps(rec) + "\n")
    for p in folder.iterdir():
        p.chmod(0o600)

    log = CursorLog(str(folder), str(root))
    cur = load_cursor(log.load("s.a"), ("0000000009.seg", 0), lambda: None)
    assert (cur.position, cur.rule_seq, cur.pending) == (("0000000002.seg", 120), 3, [rec])
    assert cur.tree is not None and cur.tree["witness"] == {"https://w.example": 2}
    log.save("s.a", cur.as_json(), lambda: b"never asked: the batch is on disk")
    log.close()
    assert (folder / "cursors.log").read_bytes() == line + line
    assert sorted(os.listdir(folder)) == ["cursors.log", "s.a.aaaaaaaaaaaa.batch"]


def test_a_reader_in_another_process_sees_a_batch_in_flight_by_its_token(tmp_path):
    """`cursorstate.read_all` (retention, `ways status`) leaves batch files unread: the
    log's token alone says a batch is in flight, and a line that is no cursor reads as
    None (retention counts it as owing)."""
    from ways_sensors.state import cursorstate
    from ways_sensors.state.cursorlog import CursorLog

    folder = tmp_path / "cursors"
    folder.mkdir(mode=0o700)
    log = CursorLog(str(folder), str(tmp_path))
    base = {"rule_seq": 3, "hash": "0" * 64, "segment": "0000000001.seg", "offset": 40}
    rec = {"section": "tool_call", "rule_seq": 3}
    log.save("s.sent", {**base, "active": True, "pending": None}, lambda: b"")
    log.save("s.held", {**base, "active": True, "pending": [rec]}, lambda: b"{}\n")
    log.close()
    with open(folder / "cursors.log", "ab") as f:
        f.write(b'{"rule": "s.odd", "segment": 7}\n')
    got = cursorstate.read_all(str(folder))
    assert got["s.held"] is not None and got["s.held"].in_flight
    assert got["s.held"].pending is None  # not read: the token says it
    assert got["s.sent"] is not None and not got["s.sent"].in_flight
    assert got["s.odd"] is None
    one = cursorstate.read(str(folder), "s.held")
    assert one is not None and one.pending == [{}]  # read with the cursor
