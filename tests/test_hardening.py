"""Hostile values through the real hook, dispatcher and consumers: paths built from
session data, session ids that look like options, lone surrogates, escaping children."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .helpers import escaping_consumer, no_checkpoints, survivors, wait_until
from .servers import Server


def lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().decode("utf-8").splitlines() if x.strip()]


def fire(install, sid: str, event: str, **fields) -> None:
    p = {
        "session_id": sid,
        "hook_event_name": event,
        "cwd": str(install.project),
        "transcript_path": fields.pop("transcript_path", ""),
        **fields,
    }
    r = install.hook(p)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def events(install) -> str:
    path = install.state_root / "events.log"
    return path.read_text() if path.exists() else ""


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# --- B: paths built from session data ---------------------------------------------------


def test_a_session_id_that_looks_like_an_option_is_delivered(install, tmp_path):
    """`-abc` is a valid id for the hook; the dispatcher's argv must not read it as an
    option (it did: `--session -abc` failed to parse, nothing delivered, nothing logged)."""
    out = tmp_path / "out"
    install.sensor(
        "s",
        f"rules:\n  r:\n    sections: [user_prompt]\n"
        f"    dispatch: {{file: {{path: '{out}/{{session_id}}.jsonl'}}}}\n",
    )
    for sid in ("-abc", "--weird-id"):
        fire(install, sid, "UserPromptSubmit", prompt=f"hello from {sid}")
    for sid in ("-abc", "--weird-id"):
        assert wait_until(lambda sid=sid: lines(out / f"{sid}.jsonl")), (sid, events(install))
        [rec] = lines(out / f"{sid}.jsonl")
        assert rec["session_id"] == sid and rec["data"]["prompt"] == f"hello from {sid}"


def test_the_dispatch_command_takes_the_id_after_a_double_dash(install):
    r = install.ways("sensors", "dispatch", "--idle", "0.2", "--", "--weird-id")
    assert r.returncode == 0, r.stderr
    r = install.ways("sensors", "dispatch", "--idle", "0.2", "--", "../x")
    assert r.returncode == 2 and "not a session id" in r.stderr


def test_the_dispatchers_own_forms_are_read_as_argparse_reads_them():
    """commands/dispatch.quick_args reads the forms launch.py starts without argparse;
    whatever it reads, argparse reads the same, and what it leaves argparse reads."""
    from ways_sensors.commands.dispatch import quick_args
    from ways_sensors.commands.parser import build_parser

    quick = (["--", "x"], ["--", "-abc"], ["--session", "x"], ["--resume-owed"],
             ["--idle", "0.2", "--", "--weird-id"], ["--session", "x", "--idle", "1e3"],
             ["--resume-owed", "--idle", "5"], ["--session", "x", "--", "y"])  # fmt: skip
    slow = (["--help"], ["x"], ["--session=x"], ["--sess", "x"], ["--", "x", "y"],
            ["--session", "x", "--session", "y"], ["--idle", "soon", "--", "x"], ["-h"],
            ["--session"], ["--"])  # fmt: skip
    parser = build_parser("sensors")
    for argv in quick:
        got = quick_args(list(argv))
        assert got is not None, argv
        want = vars(parser.parse_args(["sensors", "dispatch", *argv]))
        assert {k: want[k] for k in vars(got)} == vars(got), argv
    for argv in slow:
        assert quick_args(list(argv)) is None, argv


def test_a_dispatcher_starts_without_argparse(install):
    """The hook's form of the command (launch.py) never imports argparse."""
    code = (
        "import sys; from ways_sensors.cli import main; "
        "code = main(['sensors', 'dispatch', '--idle', '0.1', '--', 'sid-quick']); "
        "print(code, 'argparse' in sys.modules)"
    )
    r = install.python(code)
    assert r.stdout.split() == ["0", "False"], r.stderr


def test_a_transcript_timestamp_never_steers_a_file_path(install, tmp_path):
    """A queued message takes its timestamp from the transcript: `../../../x` as
    `{date}` wrote three folders up. Now the record is refused for good (dead-lettered,
    logged without content) and the other records of the rule still arrive."""
    out = tmp_path / "out"
    template = out / "a" / "b" / "c" / "{date}" / "q.jsonl"
    install.sensor(
        "s",
        f"rules:\n  r:\n    sections: [queued_message, tool_result]\n"
        f"    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{template}'}}}}\n",
    )
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    sid = "hostile-date"
    fire(install, sid, "SessionStart", transcript_path=str(transcript), source="startup")
    hostile = [
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "content": "typed while working",
            "timestamp": "../../../x",
        },
        {"type": "queue-operation", "operation": "remove", "content": "typed while working"},
    ]
    with transcript.open("a") as f:
        f.write("".join(json.dumps(x) + "\n" for x in hostile))
    fire(
        install,
        sid,
        "PostToolUse",
        transcript_path=str(transcript),
        tool_name="Bash",
        tool_use_id="t1",
        tool_input={"command": "ls"},
        tool_response={"stdout": "ok"},
    )
    parked = install.state_root / "deadletters" / "s.r.jsonl"
    assert wait_until(lambda: parked.exists() and parked.read_text().strip()), events(install)
    [dead] = lines(parked)
    assert dead["record"]["section"] == "queued_message" and dead["cause"] == "error"
    assert "{date}" in dead["reason"] and "../" not in dead["reason"]
    assert wait_until(lambda: any("/c/" in f for f in files_under(out)))
    written = files_under(out)
    assert not (out / "x").exists() and all(f.startswith("a/b/c/") for f in written), written
    [day] = {f.split("/")[3] for f in written}
    [rec] = lines(out / "a" / "b" / "c" / day / "q.jsonl")
    assert rec["section"] == "tool_result"
    log = events(install)
    assert "dispatch.error" in log and "../" not in log and "typed while" not in log


# --- C: lone surrogates -------------------------------------------------------------------

BROKEN = "hi \ud83d there \ud83d\ude00 and a low \ude00"  # a JSON escape as Claude sends it
FIXED = "hi \ufffd there \U0001f600 and a low \ufffd"


def strict_lines(path: Path) -> list[dict]:
    """A file's records, decoded as strict UTF-8 (raises on a lone surrogate's bytes)."""
    return [json.loads(x) for x in path.read_bytes().decode("utf-8").splitlines() if x]


def verify(install, path: Path, *args: str) -> tuple[int, dict]:
    r = install.ways("sensors", "verify", str(path), *args, "--json")
    return r.returncode, json.loads(r.stdout)


def test_a_lone_surrogate_never_makes_a_record_that_is_not_utf8(install, tmp_path):
    """`\\ud83d` in a payload: the strict HTTP consumer answered 400 (dead-lettered),
    files held bytes that are not UTF-8. Now every path sends U+FFFD for a lone
    surrogate, joins a pair, and the chains hash what was sent."""
    server = Server("accept")
    out = tmp_path / "out"
    chained = "    chain: true\n"
    install.sensor(
        "u",
        "rules:\n"
        "  web:\n    sections: [user_prompt]\n    delivery: at_least_once\n"
        + chained
        + f"    dispatch: {{http: {{url: '{server.url}'}}}}\n"
        "  file:\n    sections: [user_prompt]\n"
        + chained
        + f"    dispatch: {{file: {{path: '{out}/file.jsonl'}}}}\n"
        "  text:\n    sections: [user_prompt]\n"
        f"    dispatch: {{file: {{path: '{out}/text.log', format: text}}}}\n"
        "  blk:\n    sections: [user_prompt]\n    mode: blocking\n"
        + chained
        + f"    dispatch: {{file: {{path: '{out}/blk.jsonl'}}}}\n"
        "  fired:\n    sections: [way_event]\n"
        + chained
        + f"    dispatch: {{file: {{path: '{out}/fire.jsonl'}}}}\n",
    )
    try:
        raw = json.dumps(
            {
                "session_id": "surrogates",
                "hook_event_name": "UserPromptSubmit",
                "cwd": str(install.project),
                "transcript_path": "",
                "prompt": BROKEN,
                BROKEN: "a key too",
            }
        )
        assert "\\ud83d" in raw and raw.isascii()
        r = install.hook(raw)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        assert wait_until(lambda: server.bodies and (out / "file.jsonl").exists()), (
            server.attempts,
            events(install),
        )
        [body] = no_checkpoints(server.bodies)
        sent = no_checkpoints([a[2] for a in server.attempts])  # each record of the array
        assert {a[1] for a in server.attempts} == {200} and len(sent) == 1
        assert body["data"]["prompt"] == FIXED and body["data"]["extra"][FIXED] == "a key too"
        for name in ("file.jsonl", "blk.jsonl"):
            [rec] = no_checkpoints(strict_lines(out / name))
            assert rec["data"]["prompt"] == FIXED, name
        assert wait_until(lambda: (out / "text.log").exists())
        assert FIXED in (out / "text.log").read_bytes().decode("utf-8")
        for name, rule in (("file.jsonl", "u/file"), ("blk.jsonl", "u/blk")):
            code, report = verify(install, out / name, "--rule", rule)
            assert code == 0, report
        # `fire` sends through the same encoder
        given = tmp_path / "in.json"
        given.write_text(json.dumps({"kind": "fired", "note": BROKEN}))
        r = install.ways(
            "sensors", "fire", "u/fired", "--section", "way_event", "--input", str(given)
        )
        assert r.returncode == 0, r.stdout + r.stderr
        [rec] = strict_lines(out / "fire.jsonl")
        assert rec["data"]["note"] == FIXED
        code, report = verify(install, out / "fire.jsonl")
        assert code == 0, report
        # printed for a person: `fire --dry-run` and the preview of `ways sensors test`
        r = install.ways(
            "sensors",
            "fire",
            "u/fired",
            "--section",
            "way_event",
            "--input",
            str(given),
            "--dry-run",
        )
        assert r.returncode == 0 and FIXED in r.stdout, r.stderr
        transcript = tmp_path / "t.jsonl"
        line = {
            "type": "user",
            "uuid": "p1",
            "timestamp": "2026-10-06T10:00:00.000Z",
            "message": {"role": "user", "content": BROKEN},
            "origin": {"kind": "human"},
        }
        transcript.write_text(json.dumps(line) + "\n")
        r = install.ways("sensors", "test", "u/file", "--transcript", str(transcript))
        assert r.returncode == 0 and FIXED in r.stdout, r.stderr
        assert not (install.state_root / "deadletters").exists()
    finally:
        server.close()


# --- D: descendants of a command consumer ------------------------------------------------


def test_no_descendant_of_a_timed_out_command_survives(install, tmp_path):
    """Through the dispatcher (a detached process) and the blocking path (the hook
    itself): a consumer that starts `setsid ... &` and a double-forked daemon, then
    hangs, is killed at the rule's timeout with every descendant."""
    markers = {
        mode: f"ways-escape-{mode}-{os.getpid()}-{time.monotonic_ns()}"
        for mode in ("async", "blocking")
    }
    rules = "rules:\n"
    for mode, marker in markers.items():
        argv = escaping_consumer(marker, str(tmp_path / f"{mode}.started"))
        rules += (
            f"  {mode}:\n    sections: [user_prompt]\n    mode: {mode}\n    timeout: 3s\n"
            f"    dispatch: {{command: {{argv: {json.dumps(argv)}}}}}\n"
        )
    install.sensor("esc", rules)
    try:
        fire(install, "escapes", "UserPromptSubmit", prompt="go")
        assert (tmp_path / "blocking.started").exists()
        assert wait_until(lambda: "dispatch.timeout" in events(install)), events(install)
        assert (tmp_path / "async.started").exists()
        assert "blocking.timeout" in events(install)
        for mode, marker in markers.items():
            assert wait_until(lambda m=marker: not survivors(m), timeout=10), mode
    finally:
        for marker in markers.values():
            for p in survivors(marker):
                p.kill()
