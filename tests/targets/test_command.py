"""The command target with real commands: exit codes, stdin/args, batches, group kills."""

from __future__ import annotations

import json
import os
import sys
import time

import psutil

from ways_sensors.targets import (
    ACCEPTED,
    ERROR,
    PERMANENT,
    REFUSED,
    RETRYABLE,
    TIMEOUT,
    Context,
    Item,
)
from ways_sensors.targets import command as target
from ways_sensors.targets.command import CommandTarget

from ..helpers import escaping_consumer, survivors

CTX = Context("s", "r")

REC = {"section": "tool_call", "seq": 3}
LINE = json.dumps(REC).encode()
PY = sys.executable


def run(argv, timeout=2.0, **kw):
    t = time.monotonic()
    return target.deliver(CommandTarget(argv=argv, **kw), [Item(REC, LINE)], CTX, t + timeout)


def test_exit_zero_with_the_record_on_stdin(tmp_path):
    out_file = tmp_path / "got"
    code = f"import sys; open({str(out_file)!r}, 'w').write(sys.stdin.read())"
    assert run([PY, "-c", code]).status == ACCEPTED
    assert json.loads(out_file.read_text()) == REC
    assert out_file.read_text().endswith("\n")


def test_record_as_the_last_argument_and_env_and_cwd(tmp_path):
    out_file = tmp_path / "got"
    code = (
        f"import sys, os; open({str(out_file)!r}, 'w').write("
        "sys.argv[-1] + '|' + os.environ['WAYS_X'] + '|' + os.getcwd())"
    )
    out = run([PY, "-c", code], input="args", env={"WAYS_X": "y"}, cwd=str(tmp_path))
    assert out.status == ACCEPTED
    arg, env, cwd = out_file.read_text().split("|")
    assert json.loads(arg) == REC and env == "y" and cwd == str(tmp_path)


def test_non_zero_exit_is_a_retryable_refusal():
    out = run([PY, "-c", "import sys; sys.exit(1)"])
    assert (out.status, out.cause, out.detail) == (RETRYABLE, REFUSED, "exit 1")


def test_a_command_that_cannot_run_is_permanent(tmp_path):
    missing = run(["/nonexistent/consumer"])
    assert (missing.status, missing.cause) == (PERMANENT, ERROR)
    assert "ENOENT" in missing.detail
    plain = tmp_path / "consumer.sh"
    plain.write_text("#!/bin/sh\nexit 0\n")
    plain.chmod(0o644)  # not executable
    assert run([str(plain)]).status == PERMANENT
    assert run([str(tmp_path)]).status == PERMANENT  # a folder
    assert run(["true"], cwd=str(tmp_path / "no-such-folder")).status == PERMANENT


def test_sleeping_forever_is_killed_at_the_timeout():
    out = run(["sleep", "1000"], timeout=0.5)
    assert (out.status, out.cause) == (RETRYABLE, TIMEOUT) and out.killed


def test_a_batch_is_one_stdin_or_one_run_per_record_with_args(tmp_path):
    got = tmp_path / "got"
    recs = [{"n": i} for i in range(3)]
    batch = [Item(r, json.dumps(r).encode()) for r in recs]
    code = f"import sys; open({str(got)!r}, 'a').write(sys.stdin.read() + '|')"
    spec = CommandTarget(argv=[PY, "-c", code])
    assert target.deliver(spec, batch, CTX, time.monotonic() + 10).status == ACCEPTED
    [one_run] = got.read_text().split("|")[:-1]
    assert [json.loads(x) for x in one_run.splitlines()] == recs
    got.unlink()
    code = f"import sys; open({str(got)!r}, 'a').write(sys.argv[-1] + '\\n')"
    spec = CommandTarget(argv=[PY, "-c", code], input="args")
    assert target.deliver(spec, batch, CTX, time.monotonic() + 10).status == ACCEPTED
    assert [json.loads(x) for x in got.read_text().splitlines()] == recs


def test_describes_itself():
    spec = CommandTarget(argv=["nc", "example.com", "9"])
    assert target.destination(spec) == "command nc example.com 9"
    assert target.off_machine(spec)


def test_a_command_ignoring_sigterm_and_its_grandchild_are_killed(tmp_path):
    pids = tmp_path / "pids"
    code = (
        "import os, signal, time, subprocess, sys\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen(['sleep', '1000'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "while True: time.sleep(1)\n"
    )
    out = run([PY, "-c", code], timeout=1.5)
    assert out.cause == TIMEOUT and out.killed
    parent, grandchild = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
        psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
        for p in (parent, grandchild)
    ):
        time.sleep(0.05)
    for p in (parent, grandchild):
        assert not psutil.pid_exists(p) or psutil.Process(p).status() == psutil.STATUS_ZOMBIE


def test_a_consumer_that_does_not_read_stdin_does_not_hang():
    big = {"data": "x" * 300_000}
    t = time.monotonic()
    batch = [Item(big, json.dumps(big).encode())]
    out = target.deliver(CommandTarget(argv=["true"]), batch, CTX, t + 2)
    assert out.status == ACCEPTED
    assert os.environ.get("WAYS_NEVER_SET") is None


def test_descendants_that_left_the_group_are_killed_at_the_timeout(tmp_path):
    marker = f"ways-escape-{os.getpid()}-{time.monotonic_ns()}"
    started = tmp_path / "started"
    try:
        out = run(escaping_consumer(marker, str(started)), timeout=3.0)
        assert started.exists(), "the consumer never got going"
        assert out.cause == TIMEOUT and out.killed
        end = time.monotonic() + 5
        while survivors(marker) and time.monotonic() < end:
            time.sleep(0.05)
        assert survivors(marker) == []
    finally:
        for p in survivors(marker):
            p.kill()


def test_a_command_starts_with_default_signals_only_its_stdio_and_a_session_of_its_own(tmp_path):
    """spawn.py, as subprocess did: SIGPIPE and SIGXFSZ (ignored by Python) are back to
    their defaults, no descriptor of ours reaches the command (not even an inheritable
    one), and it leads a session of its own (a kill of its group takes only it)."""
    out = tmp_path / "seen"
    script = (
        f"grep SigIgn /proc/$$/status > {out}; ls /proc/$$/fd | tr '\\n' ' ' >> {out}; "
        f"echo >> {out}; ps -o sid= -p $$ >> {out}; echo $$ >> {out}"
    )
    ours = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(ours, True)
    try:
        assert run(["sh", "-c", script]).status == ACCEPTED
    finally:
        os.close(ours)
    sig_ign, fds, sid, pid = out.read_text().split("\n")[:4]
    ignored = int(sig_ign.split()[1], 16)
    assert not ignored & (1 << (13 - 1)), "SIGPIPE ignored"  # signal 13: bit 12
    assert not ignored & (1 << (25 - 1)), "SIGXFSZ ignored"
    assert {"0", "1", "2"} <= set(fds.split()) and str(ours) not in fds.split()
    assert sid.strip() == pid.strip()


def test_the_command_is_a_child_subreaper(tmp_path):
    """prctl is called through _ctypes alone (command._libc_prctl): the command runs as a
    child subreaper, so a descendant that double-forks away while it runs stays below it
    for kill_tree to find."""
    out = tmp_path / "subreaper"
    code = (
        "import ctypes\n"
        "flag = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER\n"
        f"open({str(out)!r}, 'w').write(str(flag.value))\n"
    )
    assert run([PY, "-c", code]).status == ACCEPTED
    assert out.read_text() == "1"
