"""The command target with real commands: exit codes, stdin/args, and group kills."""

from __future__ import annotations

import json
import os
import sys
import time

import psutil

from ways_sensors.spec import CommandTarget
from ways_sensors.targets import DELIVERED, ERROR, REFUSED, TIMEOUT
from ways_sensors.targets import command as target

REC = {"section": "tool_call", "seq": 3}
LINE = json.dumps(REC).encode()
PY = sys.executable


def run(argv, timeout=2.0, **kw):
    t = time.monotonic()
    return target.deliver(CommandTarget(argv=argv, **kw), REC, LINE, {}, t + timeout)


def test_exit_zero_with_the_record_on_stdin(tmp_path):
    out_file = tmp_path / "got"
    code = f"import sys; open({str(out_file)!r}, 'w').write(sys.stdin.read())"
    assert run([PY, "-c", code]).status == DELIVERED
    assert json.loads(out_file.read_text()) == REC
    assert out_file.read_text().endswith("\n")


def test_record_as_the_last_argument_and_env_and_cwd(tmp_path):
    out_file = tmp_path / "got"
    code = (
        f"import sys, os; open({str(out_file)!r}, 'w').write("
        "sys.argv[-1] + '|' + os.environ['WAYS_X'] + '|' + os.getcwd())"
    )
    out = run([PY, "-c", code], input="args", env={"WAYS_X": "y"}, cwd=str(tmp_path))
    assert out.status == DELIVERED
    arg, env, cwd = out_file.read_text().split("|")
    assert json.loads(arg) == REC and env == "y" and cwd == str(tmp_path)


def test_non_zero_exit_is_a_refusal():
    out = run([PY, "-c", "import sys; sys.exit(1)"])
    assert (out.status, out.detail) == (REFUSED, "exit 1")


def test_missing_program_is_an_error():
    assert run(["/nonexistent/consumer"]).status == ERROR


def test_sleeping_forever_is_killed_at_the_timeout():
    out = run(["sleep", "1000"], timeout=0.5)
    assert out.status == TIMEOUT and out.killed


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
    assert out.status == TIMEOUT and out.killed
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
    out = target.deliver(CommandTarget(argv=["true"]), big, json.dumps(big).encode(), {}, t + 2)
    assert out.status == DELIVERED
    assert os.environ.get("WAYS_NEVER_SET") is None
