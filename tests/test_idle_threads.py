"""An idle rule holds no thread (issue 22, defect 21), and one rule's trouble still never
reaches another: the wired hook, the detached dispatcher, real file and command
consumers, its threads counted from outside (psutil).

A dispatcher used to keep a thread per rule for its whole life, each asleep on the
journal (2,000 rules: 2,001 threads). A worker now holds a thread only while it has
work (ondemand.py): once every rule delivered, the dispatcher is back to its main
thread, whatever the number of rules; a consumer that hangs holds its own rule's thread
and nothing else.
"""

from __future__ import annotations

import psutil

from .helpers import dispatcher_pid, lines, wait_until

SID = "threads-1"
RULES = 120


def call(install, n: int) -> None:
    p = {
        "session_id": SID,
        "hook_event_name": "PreToolUse",
        "cwd": str(install.project),
        "tool_name": "Bash",
        "tool_use_id": f"toolu_{n}",
        "tool_input": {"command": f"echo {n}"},
    }
    r = install.hook(p)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def threads(install) -> int:
    pid = dispatcher_pid(install, SID)
    assert pid is not None
    return psutil.Process(pid).num_threads()


def test_idle_rules_hold_no_thread_and_a_hung_consumer_holds_only_its_own(install, tmp_path):
    out = tmp_path / "out"
    body = ["rules:"]
    for i in range(RULES):
        body += [
            f"  r{i:03d}:",
            "    sections: [tool_call]",
            "    timeout: 60s",  # a loaded machine starts 120 attempts at once
            f"    dispatch: {{file: {{path: '{out}/r{i:03d}.jsonl'}}}}",
        ]
    body += [
        "  hung:",
        "    sections: [tool_call]",
        "    timeout: 120s",
        "    dispatch: {command: {argv: [sleep, '1000']}}",
    ]
    install.sensor("many", "\n".join(body) + "\n")

    def delivered(n: int) -> bool:
        return all(len(lines(out / f"r{i:03d}.jsonl")) == n for i in range(RULES))

    call(install, 1)
    assert wait_until(lambda: delivered(1), timeout=120)
    # every file rule is idle again; the hung one waits in its attempt: main + it (+ the
    # attempt's own helpers), never a thread per rule
    assert wait_until(lambda: threads(install) <= 6, timeout=60), threads(install)
    call(install, 2)  # the hung consumer still holds its attempt: the others go on
    assert wait_until(lambda: delivered(2), timeout=120)
    assert wait_until(lambda: threads(install) <= 6, timeout=60), threads(install)
