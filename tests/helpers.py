"""Helpers the test modules share: the session the recorded payloads belong to, the
real hook and dispatcher driven and watched from outside, waiting without sleeping
longer than needed. One module, so no test module imports another."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

from ways_sensors.state import spool

from .conftest import ALL_SECTIONS, LAUNCHER, payload

CORPUS = Path(__file__).resolve().parent / "corpus"


SID = payload("SessionStart")["session_id"]  # the recorded session's (tests/fixtures)


SESSION = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreToolUse-in-subagent",
    "PostToolUseFailure",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
    "SessionEnd",
]


PY = sys.executable


def wait_until(pred, timeout=30.0, step=0.05):
    """Whether `pred()` came true within `timeout` seconds. Looks again after 5 ms, then
    ever less often, up to every `step` seconds: a condition that holds soon (most do) is
    seen at once instead of up to `step` late, and a long wait costs no more polling."""
    end = time.monotonic() + timeout
    delay = min(0.005, step)
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(delay)
        delay = min(delay * 1.5, step)
    return pred()


def lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def no_checkpoints(items: list) -> list:
    """Section records only: a `chain: true` rule's consumer also receives a signed
    checkpoint at the end of each batch (evidence/sealer.py), which a test of something
    else leaves aside. Takes records (dicts) or their JSON lines (str or bytes)."""

    def is_checkpoint(x: object) -> bool:
        if isinstance(x, dict):
            return x.get("section") == "checkpoint" and "chain" not in x
        text = x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
        return text.startswith('{"schema":"ways.sensor.checkpoint/')

    return [x for x in items if not is_checkpoint(x)]


def records(path: Path) -> list[dict]:
    """A chained file's section records, its checkpoints left aside."""
    return no_checkpoints(lines(path))


def cursor_of(install, key: str, sid: str = SID) -> dict | None:
    """A rule's cursor as the session's cursor log holds it, its pending batch read."""
    from ways_sensors.state.cursorread import read_cursor

    return read_cursor(str(install.sessions() / sid / "cursors"), key)


def set_pending(install, key: str, recs: list[dict], sid: str = SID) -> None:
    """Make `recs` the rule's pending batch, as a killed dispatcher would have left it
    (cursorlog.py: the batch file, then the line naming it); no dispatcher running."""
    folder = install.sessions() / sid / "cursors"
    st = {k: v for k, v in (cursor_of(install, key, sid) or {}).items() if k != "pending"}
    token = "feedfacefeed"
    (folder / f"{key}.{token}.batch").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with open(folder / "cursors.log", "a") as f:
        f.write(json.dumps({"rule": key, **st, "batch": token}) + "\n")


def dispatcher_done(install, sid=SID) -> bool:
    """The session's dispatcher has run and none runs now: "not alive" alone also holds
    in the moment before a detached dispatcher takes its lock (a clean-clone run met it)."""
    folder = install.sessions() / sid
    started = (folder / "dispatcher.json").exists() or not folder.exists()
    return started and not dispatcher_alive(install, sid)


def dispatcher_alive(install, sid=SID) -> bool:
    return held(install.sessions() / sid / "dispatch.lock")


def held(lock: Path) -> bool:
    """Some process holds the lock file's flock (dispatch.lock, resume.lock); False when
    there is no such file."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def dispatcher_pid(install, sid=SID) -> int | None:
    try:
        return json.loads((install.sessions() / sid / "dispatcher.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def play(install, names=SESSION, **overrides):
    for name in names:
        p = {**payload(name), **overrides}
        r = install.hook(p)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def sections_list():
    return "[" + ", ".join(ALL_SECTIONS) + "]"


def status(install) -> dict:
    """`ways status --json`; it exits UNHEALTHY (8) while dead letters wait or a
    consumer fails (services/health.py), with the same JSON."""
    r = install.ways("status", "--json")
    assert r.returncode in (0, 8), r.stderr
    return json.loads(r.stdout)


def logged(install, kind: str | None = None) -> list[dict]:
    """The events.log lines (of `kind`, when given), in order."""
    path = install.state_root / "events.log"
    if not path.exists():
        return []
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [e for e in lines if kind is None or e["kind"] == kind]


def counters_of(install, rule: str) -> dict:
    return next(r["counters"] for r in status(install)["rules"] if r["rule"] == rule)


def spool_directly(install, entries: list[tuple[str, dict]]) -> None:
    """Append entries with the hook's own spool writer (fast, for large runs)."""
    for event, p in entries:
        body = p if isinstance(p, bytes) else json.dumps(p).encode()
        spool.append(SID, event, time.time_ns(), str(install.project), body, layout=install.layout)


def start_dispatcher(install):
    import subprocess

    return subprocess.Popen(
        [str(Path(PY).parent / "ways"), "sensors", "dispatch", "--session", SID],
        env=install.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@contextmanager
def dispatcher_lock(install, session_id=SID):
    """Hold the session's dispatch lock, so the hook believes a dispatcher runs and the
    spool stays as the hook left it."""
    folder = install.sessions() / session_id
    folder.mkdir(parents=True, exist_ok=True)
    for p in (install.state_root, install.sessions(), folder):  # 0700, as ways makes them
        p.chmod(0o700)
    fd = os.open(folder / "dispatch.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


def entries(install, session_id=SID):
    return spool.read_all(session_id, install.layout)


MODULES_AT_EXIT = """
import sys
sys.argv = [{launcher!r}, "hook", "sensors", *{extra!r}]
import posix
real_exit = posix._exit
def record_and_exit(code):
    with open({out!r}, "w") as f:
        f.write("\\n".join(sorted(sys.modules)))
    real_exit(code)
posix._exit = record_and_exit
exec(compile(open({launcher!r}).read(), {launcher!r}, "exec"), {{"__file__": {launcher!r},
     "__name__": "__main__"}})
"""


def appending_consumer(tmp_path: Path) -> tuple[Path, Path]:
    """A consumer command (a shell script) and the file it appends its stdin to."""
    out = tmp_path / "got.jsonl"
    script = tmp_path / "consumer.sh"
    script.write_text(f"#!/bin/sh\ncat >> {out}\n")
    script.chmod(0o755)
    return script, out


def modules_on_path(install, tmp_path, data: bytes, extra: tuple[str, ...] = ()) -> set[str]:
    """The modules the hook (argv `hook sensors` + `extra`) had loaded when it left; it
    left as the hook always does: exit code 0, nothing on stdout or stderr."""
    out = tmp_path / "modules.txt"
    code = MODULES_AT_EXIT.format(launcher=str(LAUNCHER), out=str(out), extra=list(extra))
    r = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=data,
        capture_output=True,
        env=install.env,
        cwd=install.project,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    return set(out.read_text().split())


# typing and __future__: layout.py's TypeGuard is for type checkers only
FORBIDDEN = {"yaml", "msgspec", "httpx", "json", "subprocess", "re", "site", "ruamel", "typing"}


FORBIDDEN |= {"__future__"}


def wait_for_open(pid: int, path: str) -> None:
    """Until process `pid` holds `path` open (a waiter keeps its lock file open)."""

    def holds() -> bool:
        try:
            return path in {f.path for f in psutil.Process(pid).open_files()}
        except psutil.Error:
            return False

    assert wait_until(holds), f"{pid} never opened {path}"


def spawn(install, *args: str) -> subprocess.Popen:
    """The real `ways` command, started and left running."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "ways"), *args],
        env=install.env,
        cwd=install.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def load_corpus():
    secrets = [json.loads(x) for x in (CORPUS / "secrets.jsonl").read_text().splitlines()]
    clean = [json.loads(x) for x in (CORPUS / "clean.jsonl").read_text().splitlines()]
    return secrets, clean


def written_by(p: dict, lines: list[dict]) -> int | None:
    """The main transcript's line the client had written when it sent `p` (None: the
    event says nothing about the main transcript, e.g. a subagent's or a prompt's)."""

    def blocks(i):
        content = (lines[i].get("message") or {}).get("content")
        return content if isinstance(content, list) else []

    event = p["hook_event_name"]
    if p.get("agent_id"):
        return None
    for i in range(len(lines)):
        if event == "PreToolUse":
            hit = any(
                b.get("type") == "tool_use" and b.get("id") == p["tool_use_id"] for b in blocks(i)
            )
        elif event in ("PostToolUse", "PostToolUseFailure"):
            hit = any(
                b.get("type") == "tool_result" and b.get("tool_use_id") == p["tool_use_id"]
                for b in blocks(i)
            )
        elif event == "Stop":
            hit = lines[i].get("type") == "assistant" and any(
                b.get("text") == p["last_assistant_message"] for b in blocks(i)
            )
        elif event == "SessionStart" and p.get("source") == "compact":
            hit = lines[i].get("subtype") == "compact_boundary"
        elif event == "SessionEnd":
            return len(lines) - 1
        else:
            return None
        if hit:
            return i
    raise AssertionError(f"{event} {p.get('tool_use_id')} has no line in the transcript")


def survivors(marker: str) -> list[psutil.Process]:
    """Live processes (not zombies) whose argv carries `marker`."""
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and marker in (p.info["cmdline"] or []):
                out.append(p)
        except psutil.Error:
            continue
    return out


def escaping_consumer(marker: str, started: str) -> list[str]:
    """A command that leaves its process group twice, then hangs: a `setsid` grandchild,
    and a double-forked daemon whose middle parent exits (init would adopt it)."""
    daemon = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1000)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    sleeper = "import time; time.sleep(1000)"
    script = (
        f"setsid {sys.executable} -c '{sleeper}' {marker} &\n"
        f"{sys.executable} -c '{daemon}' {marker}\n"
        f"echo up > {started}\n"
        "sleep 1000\n"
    )
    return ["sh", "-c", script, "consumer"]


def play_recorded(install, folder: Path, sent: list[dict], transcript: Path) -> None:
    """A recorded Claude Code session (`sent`: its hook payloads in order; `transcript`
    with its `<session>/subagents/` beside it) through the wired hook, each event at a
    fixed instant (event i at 23:52:00 + i s, UTC), the transcript copied to `folder` and
    growing as the client wrote it; then the real dispatcher over the whole spool."""
    import datetime
    import shutil

    from ways_sensors.commands.reconcile import hook_command

    assert shutil.which("faketime"), "faketime is missing: scripts/setup.sh installs it"
    sid = sent[0]["session_id"]
    raw = transcript.read_bytes().splitlines(keepends=True)
    lines = [json.loads(x) for x in raw]
    path = folder / transcript.name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    subagents = transcript.with_suffix("") / "subagents"
    base = datetime.datetime(2026, 11, 29, 23, 52)
    done = 0

    def hook(i: int, p: dict) -> None:
        nonlocal done
        upto = written_by(p, lines)
        if upto is not None and upto >= done:
            with path.open("ab") as f:
                f.write(b"".join(raw[done : upto + 1]))
            done = upto + 1
        p = {**p, "transcript_path": str(path)}
        if p.get("agent_transcript_path"):
            p["agent_transcript_path"] = str(subagents / Path(p["agent_transcript_path"]).name)
        at = (base + datetime.timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S")
        argv = ["faketime", "-f", at, "sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
        r = subprocess.run(
            argv, env={**install.env, "TZ": "UTC"}, input=json.dumps(p).encode(),
            capture_output=True, cwd=install.project, timeout=60,
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")

    with dispatcher_lock(install, sid):  # spooled as the hook left it, no dispatcher yet
        for i, p in enumerate(sent):
            hook(i, p)
    with path.open("ab") as f:
        f.write(b"".join(raw[done:]))
    # then the real dispatcher over the whole spool: what it builds does not hang on how
    # far it lagged behind the client (each event reads the transcript as its hook saw it)
    r = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", sid,
         "--idle", "0.5"],
        env=install.env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: not dispatcher_alive(install, sid))


def age(folder: Path, seconds: float) -> None:
    """Make everything in `folder` look untouched for `seconds`."""
    then = time.time() - seconds
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.utime(os.path.join(base, name), (then, then), follow_symlinks=False)
    os.utime(folder, (then, then))


class VirtualClock:
    """Time that moves only when the worker sleeps: backoff costs no real time."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        self.slept.append(seconds)
        self.t += seconds
        return stop.is_set()
