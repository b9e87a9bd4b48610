"""The file target: whole lines, placeholders, private folders, json and text, batches,
and which failures are permanent."""

from __future__ import annotations

import json
import stat
import threading
import time

from ways_sensors.targets import ACCEPTED, ERROR, PERMANENT, Context, Item
from ways_sensors.targets import file as target
from ways_sensors.targets.file import FileTarget

REC = {
    "section": "tool_call",
    "timestamp": "2026-11-29T11:40:02.123Z",
    "rule_seq": 4,
    "agent_type": "main",
    "agent_id": None,
    "data": {"tool_name": "Bash", "input": {"command": "ls\n-la"}},
}
LINE = json.dumps(REC).encode()
CTX = Context("audit", "all", session_id="s1", date="2026-11-29")


def test_placeholders_folders_and_modes(tmp_path):
    spec = FileTarget(path=str(tmp_path / "{date}" / "{sensor}-{rule}-{session_id}.jsonl"))
    assert target.deliver(spec, [Item(REC, LINE)], CTX, time.monotonic() + 1).status == ACCEPTED
    path = tmp_path / "2026-11-29" / "audit-all-s1.jsonl"
    assert json.loads(path.read_text()) == REC
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_home_expansion(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    spec = FileTarget(path="~/logs/x.jsonl")
    assert target.deliver(spec, [Item(REC, LINE)], CTX, time.monotonic() + 1).status == ACCEPTED
    assert (tmp_path / "logs" / "x.jsonl").exists()


def test_text_format_is_one_readable_line(tmp_path):
    spec = FileTarget(path=str(tmp_path / "t.log"), format="text")
    target.deliver(spec, [Item(REC, LINE)], CTX, time.monotonic() + 1)
    text = (tmp_path / "t.log").read_text()
    assert text.count("\n") == 1
    assert text.startswith("2026-11-29T11:40:02.123Z #4 tool_call main Bash")
    assert "ls\\n-la" in text


def test_concurrent_writers_never_interleave(tmp_path):
    spec = FileTarget(path=str(tmp_path / "c.jsonl"))
    big = {"data": "y" * 100_000}
    line = json.dumps(big).encode()

    def write():
        for _ in range(20):
            target.deliver(spec, [Item(big, line)], CTX, time.monotonic() + 5)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == 160 and all(json.loads(x) == big for x in lines)


def test_a_path_through_a_file_or_that_is_a_folder_is_permanent(tmp_path):
    (tmp_path / "f").write_text("a file, not a folder")
    for path in (tmp_path / "f" / "x.jsonl", tmp_path / "f" / "deeper" / "x.jsonl", tmp_path):
        out = target.deliver(
            FileTarget(path=str(path)), [Item(REC, LINE)], CTX, time.monotonic() + 1
        )
        assert (out.status, out.cause) == (PERMANENT, ERROR), (path, out)
    assert (
        target.deliver(
            FileTarget(path=str(tmp_path)), [Item(REC, LINE)], CTX, time.monotonic() + 1
        ).detail
        == "EISDIR"
    )


def test_a_batch_is_one_write_per_file_and_each_record_keeps_its_date(tmp_path):
    recs = [
        {**REC, "rule_seq": 1, "timestamp": "2026-11-29T23:59:59.999Z"},
        {**REC, "rule_seq": 2, "timestamp": "2026-11-30T00:00:00.001Z"},
        {**REC, "rule_seq": 3, "timestamp": "2026-11-30T00:00:01.000Z"},
    ]
    spec = FileTarget(path=str(tmp_path / "{date}.jsonl"))
    batch = [Item(r, json.dumps(r).encode()) for r in recs]
    assert target.deliver(spec, batch, CTX, time.monotonic() + 1).status == ACCEPTED
    first = [json.loads(x) for x in (tmp_path / "2026-11-29.jsonl").read_text().splitlines()]
    second = [json.loads(x) for x in (tmp_path / "2026-11-30.jsonl").read_text().splitlines()]
    assert [r["rule_seq"] for r in first] == [1] and [r["rule_seq"] for r in second] == [2, 3]


def test_describes_itself():
    spec = FileTarget(path="/var/log/x.jsonl")
    assert target.destination(spec) == "file /var/log/x.jsonl"
    assert not target.off_machine(spec)


def test_a_placeholder_value_that_is_not_one_safe_segment_is_refused_for_good(tmp_path):
    """Every templated value comes from session data: `..`, a slash, NUL, an empty value
    or a date not shaped YYYY-MM-DD fails for good, names the placeholder and not the
    value, and writes nothing anywhere."""
    deep = tmp_path / "a" / "b"
    spec = FileTarget(path=str(deep / "{sensor}" / "{rule}" / "{session_id}" / "{date}.jsonl"))
    hostile = {
        "session_id": ["..", ".", "", "../../x", "a/b", "x\x00y", "new\nline"],
        "sensor": ["..", "a/..", ""],
        "rule": ["..", "/etc"],
        "date": ["../../../x", "..", "2026-1-1", "2026/11/29", "", "２０２６-11-29"],
    }
    for key, values in hostile.items():
        for value in values:
            ctx = CTX.replace(**{key: value})
            rec = {**REC, "timestamp": value} if key == "date" else REC
            out = target.deliver(spec, [Item(rec, LINE)], ctx, time.monotonic() + 1)
            assert (out.status, out.cause) == (PERMANENT, ERROR), (key, value, out)
            assert out.detail == f"{{{key}}} is not a safe path segment", out.detail
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    # a leading dash is a fine file name: the path is opened, never put on an argv
    ok = target.deliver(
        spec, [Item(REC, LINE)], CTX.replace(session_id="-abc"), time.monotonic() + 1
    )
    assert ok.status == ACCEPTED
    assert (deep / "audit" / "all" / "-abc" / "2026-11-29.jsonl").exists()


def test_home_is_expanded_before_the_placeholders_are_filled(tmp_path, monkeypatch):
    """`~{session_id}` must never become `~someone`: another user's home, or, for a name
    that is no user, a path relative to the working folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    spec = FileTarget(path="~{session_id}/x.jsonl")
    ctx = CTX.replace(session_id="no-such-user-here")
    out = target.deliver(spec, [Item(REC, LINE)], ctx, time.monotonic() + 1)
    assert (out.status, out.cause, out.detail) == (PERMANENT, ERROR, "the path is not absolute")
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_the_dispatcher_creates_every_missing_folder_0700_under_any_umask(install, tmp_path):
    """Through the hook as wired and the detached dispatcher it starts, which inherits
    umask 000: each folder the file target creates is 0700, not only the last."""
    import os

    from ..helpers import dispatcher_done, wait_until
    from ..sessions import EXPECTED, SID, TOTAL, ScriptedSession

    base = tmp_path / "audit"
    base.mkdir(mode=0o755)
    install.sensor(
        "deep",
        f"""\
        rules:
          all:
            sections: [{", ".join(EXPECTED)}]
            delivery: at_least_once
            dispatch: {{file: {{path: '{base}/a/b/{{date}}/{{session_id}}.jsonl'}}}}
        """,
    )
    old = os.umask(0)
    try:
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: dispatcher_done(install, SID))
    finally:
        os.umask(old)
    outs = sorted(base.glob("a/b/*/*.jsonl"))  # {date}: the transcript's and today's
    assert sum(len(p.read_text().splitlines()) for p in outs) == TOTAL
    assert {stat.S_IMODE(p.stat().st_mode) for p in outs} == {0o600}
    made = [base / "a", base / "a" / "b", *(p.parent for p in outs)]
    assert {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {
        str(p): "0o700" for p in made
    }
    assert stat.S_IMODE(base.stat().st_mode) == 0o755  # the user's own folder, untouched
