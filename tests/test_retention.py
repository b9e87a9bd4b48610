"""Content at rest, bounded (issue 12, defect 8), through the real hook, dispatcher and
commands: build.json keeps ids, offsets and keyed digests, never a prompt, reply, queued
message or secret (and a restarted dispatcher still recovers those texts from the
transcript); a finished session leaves only its ledger; an abandoned one is removed by
the next dispatcher start after `ways.retention.abandoned_after`; events.log and the
ledger stay under their caps; `ways status` shows the state root's size."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil

from ways_sensors.dispatch import ages, retention
from ways_sensors.state import events

from .conftest import everything_sensor, kill_dispatchers
from .helpers import age, cursor_of, held, logged, wait_until
from .sessions import ScriptedSession

SECRET = "ghp_" + "Zq8Lk2Rt5Vx9Pw3Nm6Hj1Gf4Ds7Ba0Ce" + "Yu2T"
PROMPT = f"use the token {SECRET} for the quokka deploy"
REPLY = f"I pushed with {SECRET}; the axolotl_reply_text follows"
QUEUED = "also look at the tapir_queued_text please"


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    got = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in got if r.get("section") != "checkpoint"]  # a chained batch's, signed


def stop_dispatcher(install, sid: str) -> None:
    """SIGKILL the session's dispatchers (a second one a late hook started may take the
    lock when the first dies) until its lock stays free."""
    lock = install.sessions() / sid / "dispatch.lock"

    def free() -> bool:
        return not held(lock)

    end = time.monotonic() + 30
    while time.monotonic() < end:
        for proc in psutil.process_iter(["cmdline", "environ"]):
            try:
                cmd, env = proc.info["cmdline"] or [], proc.info["environ"] or {}
                if sid in cmd and str(install.root) in env.get("XDG_STATE_HOME", ""):
                    proc.kill()
            except psutil.Error:
                continue
        if wait_until(free, 5):
            time.sleep(0.3)
            if free():
                return
    raise AssertionError(f"the dispatcher of {sid} would not stop")


# --- build.json ---------------------------------------------------------------------------


def test_build_json_holds_no_content_and_a_restart_still_recovers_it(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    s = ScriptedSession(install, tmp_path / "transcripts")
    s.hook("SessionStart", source="startup", model="m")
    s.user(PROMPT)
    s.hook("UserPromptSubmit", prompt=PROMPT)
    s.assistant(REPLY, "msg_1")  # this turn never reaches a Stop
    s.line({"type": "queue-operation", "operation": "enqueue", "content": QUEUED})
    tool = {"tool_name": "Bash", "tool_use_id": "toolu_1"}
    s.hook("PostToolUse", tool_response={"stdout": "ok"}, **tool)  # the tracker reads

    build = install.sessions() / s.sid / "build.json"
    size = s.transcript.stat().st_size

    def tracked() -> dict | None:
        try:
            state = json.loads(json.loads(build.read_text())["trackers"]["claude-code"])
        except (OSError, ValueError, KeyError):
            return None
        return state if state["offset"] == size else None

    assert wait_until(lambda: tracked() is not None)
    text = build.read_text()
    for content in (SECRET, PROMPT, REPLY, QUEUED, "quokka", "axolotl", "tapir"):
        assert content not in text
    state = tracked()
    assert state["turns"][-1]["held"] is True and state["turns"][-1]["msg"] == "msg_1"
    assert state["pending"][0][1] is None and len(state["pending"][0][0]) == 24

    # a restart: the next dispatcher reads both texts back from the transcript
    stop_dispatcher(install, s.sid)
    s.line({"type": "queue-operation", "operation": "remove"})  # the queue's head: no text
    s.hook("SessionEnd", reason="other")
    assert wait_until(lambda: not (install.sessions() / s.sid).exists())
    got = {r["section"]: r for r in records(out)}
    assert got["queued_message"]["data"]["text"] == QUEUED
    reply = got["assistant_response"]["data"]
    assert reply["interrupted"] is True and "axolotl_reply_text follows" in reply["text"]
    assert SECRET not in reply["text"] and "[REDACTED:" in reply["text"]
    assert not logged(install, "tracker.text_not_found")


# --- sessions -------------------------------------------------------------------------------


def start(install, sid: str, prompt: str = "hello") -> None:
    for event, fields in (("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {})):
        p = {"session_id": sid, "hook_event_name": event, "cwd": str(install.project)}
        r = install.hook({**p, **fields, "prompt": prompt})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_a_finished_session_leaves_only_its_ledger(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    start(install, "done-1")
    p = {"session_id": "done-1", "hook_event_name": "SessionEnd", "reason": "other"}
    assert install.hook(p).returncode == 0
    assert wait_until(lambda: not (install.sessions() / "done-1").exists())
    assert len(records(out)) == 3
    assert json.loads((install.state_root / "ledger" / "done-1.json").read_text())["seq"] == 3
    assert not (install.state_root / "pending" / "done-1").exists()


def test_an_abandoned_session_is_removed_by_the_next_dispatcher_start(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out, chain="true"))
    r = install.ways("settings", "set", "ways.retention.abandoned_after", "2d")
    assert r.returncode == 0, r.stderr
    for sid in ("old-1", "recent-1"):
        start(install, sid, prompt=f"the prompt of {sid}")
    assert wait_until(lambda: len(records(out)) == 4)
    for sid in ("old-1", "recent-1"):
        stop_dispatcher(install, sid)
    age(install.sessions() / "old-1", 3 * 86400)  # past the configured 2 days
    age(install.sessions() / "recent-1", 1 * 86400)  # not yet
    spool_bytes = sum(f.stat().st_size for f in (install.sessions() / "old-1").rglob("*.seg"))

    start(install, "fresh-1")  # its dispatcher sweeps as it starts
    assert wait_until(lambda: logged(install, "retention.session_removed"))
    assert not (install.sessions() / "old-1").exists()
    assert (install.sessions() / "recent-1").is_dir()
    [removed] = logged(install, "retention.session_removed")
    assert removed["session"] == "old-1" and removed["owes"] is False
    assert removed["idle_h"] >= 72 and removed["bytes"] >= spool_bytes > 0
    ledger = json.loads((install.state_root / "ledger" / "old-1.json").read_text())
    assert ledger["seq"] == 2 and ledger["rules"]["all/everything"][0] == 2
    assert ledger["cost"] == {"amount": "0", "replies": 0, "unpriced": 0}  # numbers only

    # the session comes back (a resumed agent): it goes on from its ledger
    old = [r for r in records(out) if r["session_id"] == "old-1"]
    start(install, "old-1", prompt="back again")
    assert wait_until(lambda: len([r for r in records(out) if r["session_id"] == "old-1"]) == 4)
    again = [r for r in records(out) if r["session_id"] == "old-1"][2:]
    assert [r["rule_seq"] for r in again] == [3, 4] and [r["seq"] for r in again] == [3, 4]
    link = again[0]["chain"]["prev"]
    assert link == old[-1]["chain"]["hash"] == ledger["rules"]["all/everything"][1]


def test_the_sweep_waits_until_the_dispatchers_backlog_is_delivered(install, tmp_path):
    """The sweep is not paid before a dispatcher's first records are delivered: it runs
    at the first quiet moment (nothing to build, every worker idle; dispatcher.py)."""
    out, go = tmp_path / "out.jsonl", tmp_path / "go"
    install.sensor("all", everything_sensor(out))
    start(install, "old-2")
    assert wait_until(lambda: len(records(out)) == 2)
    stop_dispatcher(install, "old-2")
    age(install.sessions() / "old-2", 8 * 86400)  # past the default 7 days
    consumer = f"while [ ! -f '{go}' ]; do sleep 0.05; done; cat > /dev/null"
    install.sensor(
        "slow",
        f"""\
        rules:
          r:
            sections: [session_start]
            timeout: 30s
            dispatch: {{command: {{argv: [sh, -c, "{consumer}"]}}}}
        """,
    )
    start(install, "busy-1")  # its slow rule's worker is busy: no quiet moment yet
    assert wait_until(lambda: len(records(out)) == 4)  # the other rule's are delivered
    time.sleep(2.0)
    assert (install.sessions() / "old-2").is_dir()
    assert not logged(install, "retention.session_removed")
    go.touch()  # the consumer takes its record: every worker is idle, the sweep runs
    assert wait_until(lambda: logged(install, "retention.session_removed"))
    assert not (install.sessions() / "old-2").exists()


def test_a_removed_session_that_was_still_running_exports_nothing_twice(install, tmp_path):
    """Removed while its agent waited (a week away from the keyboard): its next event is
    no session start, so its tracker comes back from the ledger, not from offset 0."""
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    s = ScriptedSession(install, tmp_path / "transcripts", sid="away-1")
    s.hook("SessionStart", source="startup", model="m")
    s.line({"type": "queue-operation", "operation": "enqueue", "content": QUEUED})
    s.line({"type": "queue-operation", "operation": "remove", "content": QUEUED})
    tool = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_response": {"stdout": "ok"}}
    s.hook("PostToolUse", **tool)
    assert wait_until(lambda: any(r["section"] == "queued_message" for r in records(out)))
    stop_dispatcher(install, "away-1")
    age(install.sessions() / "away-1", 8 * 86400)  # past the default 7 days
    start(install, "other-1")
    assert wait_until(lambda: logged(install, "retention.session_removed"))
    assert not (install.sessions() / "away-1").exists()

    s.hook("PostToolUse", **tool)  # back, mid-session
    mine = lambda: [r["section"] for r in records(out) if r["session_id"] == "away-1"]  # noqa: E731
    assert wait_until(lambda: mine().count("tool_result") == 2)
    time.sleep(0.5)  # a second queued_message would come with the tool_result
    assert mine().count("queued_message") == 1


def test_the_abandoned_after_setting_is_checked(install):
    key = "ways.retention.abandoned_after"
    r = install.ways("settings", "set", key, "30m")
    assert r.returncode == 3 and "at least 1h" in r.stderr
    assert install.ways("settings", "get", key).stdout.strip() == "7d"  # the default
    assert install.ways("settings", "set", key, "12h").returncode == 0
    assert install.ways("settings", "get", key).stdout.strip() == "12h"
    assert "abandoned_after: 12h" in (install.config_root / "config.yaml").read_text()
    assert ages.parse_age("12h") == 43200 and ages.parse_age("2w") == 14 * 86400


# --- logs and the ledger -------------------------------------------------------------------


def bad_payload(install) -> None:
    """A hook payload with no event name: one `hook.no_event_name` line."""
    r = install.hook(b'{"neither": "an event"}')
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_events_log_is_rotated_at_its_cap(install):
    root = install.state_root
    root.mkdir(parents=True)
    root.chmod(0o700)
    log, old = root / "events.log", root / "events.log.1"
    filler = b'{"ts":"2026-01-01T00:00:00.000Z","kind":"filler"}\n'
    log.write_bytes(filler * (events.LOG_MAX // len(filler)))
    log.chmod(0o600)
    bad_payload(install)  # crosses the cap: this line ends the file that is set aside
    assert old.stat().st_size > events.LOG_MAX and not log.exists()
    assert json.loads(old.read_text().splitlines()[-1])["kind"] == "hook.no_event_name"
    bad_payload(install)
    assert [json.loads(x)["kind"] for x in log.read_text().splitlines()] == ["hook.no_event_name"]
    assert old.stat().st_mode & 0o777 == 0o600 and log.stat().st_mode & 0o777 == 0o600

    log.write_bytes(b"x" * (events.LOG_MAX + 1))  # past the cap again: the older one goes
    bad_payload(install)
    assert old.read_bytes().startswith(b"x" * 100) and filler not in old.read_bytes()


def test_the_ledger_keeps_its_newest_sessions(install, tmp_path, monkeypatch):
    install.sensor("all", everything_sensor(tmp_path / "out.jsonl"))
    ledger = install.state_root / "ledger"
    ledger.mkdir(parents=True)
    for p in (install.state_root.parent, install.state_root, ledger):
        p.chmod(0o700)
    extra = 5
    then = time.time() - 86400
    for i in range(retention.LEDGER_MAX + extra):
        path = ledger / f"s{i:05d}.json"
        path.write_text('{"seq":1,"rules":{}}')
        os.utime(path, (then + i, then + i))  # s00000 is the oldest
    start(install, "new-1")
    assert wait_until(lambda: logged(install, "retention.ledger_pruned"))
    [pruned] = logged(install, "retention.ledger_pruned")
    assert pruned["removed"] == extra
    names = sorted(p.name for p in ledger.iterdir())
    assert len(names) == retention.LEDGER_MAX and names[0] == f"s{extra:05d}.json"


def test_status_shows_the_state_roots_size(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "out.jsonl"))
    start(install, "size-1")
    p = {"session_id": "size-1", "hook_event_name": "SessionEnd", "reason": "other"}
    assert install.hook(p).returncode == 0
    assert wait_until(lambda: not (install.sessions() / "size-1").exists())
    kill_dispatchers(install.root)
    r = install.ways("status", "--json")
    state = json.loads(r.stdout)["state"]
    files = [p for p in install.state_root.rglob("*") if p.is_file()]
    assert state["bytes"] == sum(p.stat().st_size for p in files) > 0
    assert state["files"] == len(files) and state["complete"] is True
    assert state["root"] == str(install.state_root) and state["abandoned_after_s"] == 7 * 86400
    line = install.ways("status").stdout.splitlines()[-1]
    assert line.startswith(f"state: {install.state_root} holds ") and "7 day(s)" in line


def test_a_session_that_owes_records_is_never_swept(install, tmp_path):
    """Issue 22, defect 1: an ended session whose at_least_once consumer was down, older
    than `abandoned_after`, is kept by the next start's sweep, and the resumer that start
    brings delivers what it owed once the consumer is back."""
    out, up = tmp_path / "out.jsonl", tmp_path / "up"
    install.config("ways:\n  dispatch_idle_seconds: 1\n  retention:\n    abandoned_after: 1h\n")
    consumer = f"test -f '{up}' && cat >> '{out}'"
    install.sensor(
        "owed",
        f"""\
        rules:
          r:
            sections: [session_start, user_prompt, session_end]
            delivery: at_least_once
            timeout: 2s
            dispatch: {{command: {{argv: [sh, -c, "{consumer}"]}}}}
        """,
    )
    start(install, "owes-1")
    p = {"session_id": "owes-1", "hook_event_name": "SessionEnd", "reason": "other"}
    assert install.hook(p).returncode == 0
    marker = install.state_root / "pending" / "owes-1"
    assert wait_until(lambda: marker.exists(), timeout=60)
    stop_dispatcher(install, "owes-1")
    age(install.sessions() / "owes-1", 3 * 3600)  # past the configured hour
    # a week-old backoff must not hide it: the resumer is due at once
    (install.state_root / "resume" / "backoff.json").unlink(missing_ok=True)
    (install.state_root / "resume" / "next").unlink(missing_ok=True)
    up.touch()  # the consumer is back

    start(install, "fresh-2")  # its dispatcher sweeps; the hook starts the resumer
    mine = lambda: [r["section"] for r in records(out) if r["session_id"] == "owes-1"]  # noqa: E731
    assert wait_until(lambda: len(mine()) == 3, timeout=60), records(out)
    assert mine() == ["session_start", "user_prompt", "session_end"]
    assert not [e for e in logged(install, "retention.session_removed") if e["session"] == "owes-1"]
    assert wait_until(lambda: not marker.exists())


def test_a_killed_dispatchers_undelivered_records_keep_the_session(install, tmp_path):
    """No marker (its dispatcher was SIGKILLed before it could leave one), records in
    the journal no cursor passed: kept and marked, not removed."""
    out, up = tmp_path / "out.jsonl", tmp_path / "up"
    install.config("ways:\n  retention:\n    abandoned_after: 1h\n")
    consumer = f"test -f '{up}' && cat >> '{out}'"
    install.sensor(
        "owed",
        f"""\
        rules:
          r:
            sections: [session_start, user_prompt]
            delivery: at_least_once
            timeout: 2s
            dispatch: {{command: {{argv: [sh, -c, "{consumer}"]}}}}
        """,
    )
    start(install, "killed-1")
    assert wait_until(lambda: (cursor_of(install, "owed.r", "killed-1") or {}).get("pending"))
    stop_dispatcher(install, "killed-1")
    assert not (install.state_root / "pending" / "killed-1").exists()
    age(install.sessions() / "killed-1", 3 * 3600)
    start(install, "fresh-3")
    assert wait_until(lambda: logged(install, "retention.session_kept"), timeout=60)
    assert (install.sessions() / "killed-1").is_dir()
    assert (install.state_root / "pending" / "killed-1").exists()
    assert not logged(install, "retention.session_removed")
