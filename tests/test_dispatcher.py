"""The detached dispatcher as a real process, started by the real hook."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import time

import psutil
import pytest

from .conftest import payload
from .helpers import (
    PY,
    SID,
    counters_of,
    dispatcher_alive,
    dispatcher_pid,
    lines,
    logged,
    no_checkpoints,
    play,
    sections_list,
    spool_directly,
    start_dispatcher,
    status,
    wait_until,
)
from .servers import Server, free_port


def test_records_reach_file_http_and_command_consumers(install, tmp_path):
    server = Server("accept")
    try:
        out = tmp_path / "out"
        out.mkdir()  # the command's folder: the file rule's first batch (which makes it)
        # may come later, after signing its first checkpoint made this machine's root key
        append_stdin = f"import sys; open('{out}/cmd.jsonl','a').write(sys.stdin.read())"
        install.sensor(
            "fanout",
            f"""\
            rules:
              to-file:
                sections: {sections_list()}
                dispatch: {{file: {{path: '{out}/{{session_id}}.jsonl'}}}}
                chain: true
                delivery: at_least_once
              to-http:
                sections: [tool_call, tool_result]
                dispatch: {{http: {{url: '{server.url}'}}}}
              to-command:
                sections: [user_prompt]
                dispatch:
                  command:
                    argv: [{PY}, -c, "{append_stdin}"]
            """,
        )
        play(install)
        assert wait_until(lambda: not (install.sessions() / SID).exists())
        got = lines(out / f"{SID}.jsonl")
        assert got[-1]["section"] == "checkpoint"  # the last batch's signed checkpoint
        got = no_checkpoints(got)
        assert [r["rule_seq"] for r in got] == list(range(1, len(got) + 1))
        assert [r["seq"] for r in got] == sorted(r["seq"] for r in got)
        assert {r["section"] for r in got} >= {
            "session_start",
            "user_prompt",
            "tool_call",
            "tool_result",
            "subagent",
            "assistant_response",
            "compaction",
            "session_end",
        }
        assert all(r["sensor"] == "fanout" and r["rule"] == "to-file" for r in got)
        assert all("chain" in r for r in got)
        http = server.wait_for(4)
        assert [r["section"] for r in http] == [
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
        ]
        assert [r["rule_seq"] for r in http] == [1, 2, 3, 4]
        cmd = lines(out / "cmd.jsonl")
        assert [r["data"]["prompt"] for r in cmd] == [payload("UserPromptSubmit")["prompt"]]
        # drained after session_end: the folder is gone, the ledger stays
        assert (install.state_root / "ledger" / f"{SID}.json").exists()
        c = counters_of(install, "fanout/to-file")
        assert c["dispatched"] == c["delivered"] == len(got)
    finally:
        server.close()


def test_a_stuck_consumer_never_delays_another(install, tmp_path):
    out = tmp_path / "fast.jsonl"
    install.sensor(
        "two",
        f"""\
        rules:
          stuck:
            sections: [tool_call]
            dispatch: {{command: {{argv: [sleep, "1000"]}}}}
            timeout: 60s
          fast:
            sections: [tool_call]
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    play(install, ["PreToolUse"] * 5)
    assert wait_until(lambda: len(lines(out)) == 5, timeout=30)
    # ...while the stuck rule's consumer still runs its first record: nothing of it
    # delivered, its command a child of the dispatcher
    assert counters_of(install, "two/stuck")["delivered"] == 0
    dispatcher = psutil.Process(dispatcher_pid(install))
    stuck = [p for p in dispatcher.children() if p.cmdline() == ["sleep", "1000"]]
    assert len(stuck) == 1


def test_failures_are_counted_and_logged_content_free(install, tmp_path):
    refuse, hang = Server("refuse"), Server("hang")
    try:
        install.sensor(
            "bad",
            f"""\
            rules:
              exit1:
                sections: [user_prompt]
                dispatch: {{command: {{argv: [{PY}, -c, "import sys; sys.exit(1)"]}}}}
              sleeper:
                sections: [user_prompt]
                timeout: 500ms
                dispatch: {{command: {{argv: [sleep, "1000"]}}}}
              refused:
                sections: [user_prompt]
                dispatch: {{http: {{url: '{refuse.url}'}}}}
              hung:
                sections: [user_prompt]
                timeout: 1s
                dispatch: {{http: {{url: '{hang.url}'}}}}
            """,
        )
        secret = "prompt with hunter2 inside"
        play(install, ["SessionStart"])
        install.hook({**payload("UserPromptSubmit"), "prompt": secret})
        play(install, ["SessionEnd"])
        assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=30)
        assert counters_of(install, "bad/exit1")["refusals"] == 1
        assert counters_of(install, "bad/refused")["refusals"] == 1
        sl = counters_of(install, "bad/sleeper")
        assert sl["timeouts"] == 1 and sl["kills"] == 1 and sl["lost"] == 1
        assert counters_of(install, "bad/hung")["timeouts"] == 1
        log = (install.state_root / "events.log").read_text()
        kinds = [json.loads(x)["kind"] for x in log.splitlines()]
        assert kinds.count("dispatch.refused") == 2 and kinds.count("dispatch.timeout") == 2
        assert "hunter2" not in log
    finally:
        refuse.close()
        hang.close()


def test_second_dispatcher_exits_at_once(install, tmp_path):
    install.config("ways:\n  dispatch_idle_seconds: 30\n")
    install.sensor(
        "f",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o.jsonl'}}}}\n",
    )
    play(install, ["PreToolUse"])
    # the lock is taken a moment before dispatcher.json is written (Dispatcher.acquire)
    assert wait_until(lambda: dispatcher_alive(install) and dispatcher_pid(install))
    first = dispatcher_pid(install)
    r = install.ways("sensors", "dispatch", "--session", SID, timeout=20)
    assert r.returncode == 0 and (r.stdout, r.stderr) == ("", "")
    assert dispatcher_pid(install) == first and dispatcher_alive(install)
    [live] = status(install)["dispatchers"]
    assert live["session"] == SID and live["pid"] == first and live["age_s"] >= 0


def test_idle_exit_keeps_the_session_and_the_next_event_restarts(install, tmp_path):
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    out = tmp_path / "o.jsonl"
    install.sensor(
        "f", f"rules:\n  r:\n    sections: [tool_call]\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(lines(out)) == 1)
    assert wait_until(lambda: not dispatcher_alive(install), timeout=15)
    assert (install.sessions() / SID).exists()
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(lines(out)) == 2)
    assert [r["rule_seq"] for r in lines(out)] == [1, 2]
    assert [r["seq"] for r in lines(out)] == [1, 2]
    # everything that holds session content: 0600 files in 0700 folders
    for p in install.state_root.rglob("*"):
        mode = p.stat().st_mode & 0o777
        assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))


def test_an_edited_sensor_takes_effect_without_a_restart(install, tmp_path):
    install.config("ways:\n  dispatch_idle_seconds: 30\n")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    install.sensor(
        "f", f"rules:\n  a:\n    sections: [tool_call]\n    dispatch: {{file: {{path: '{a}'}}}}\n"
    )
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(lines(a)) == 1)
    pid = dispatcher_pid(install)
    install.sensor(
        "g", f"rules:\n  b:\n    sections: [tool_call]\n    dispatch: {{file: {{path: '{b}'}}}}\n"
    )
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(lines(b)) == 1 and len(lines(a)) == 2)
    assert dispatcher_pid(install) == pid


def test_queue_cap_drops_best_effort_and_keeps_at_least_once(install, tmp_path):
    be, alo = tmp_path / "be.jsonl", tmp_path / "alo.jsonl"
    install.sensor(
        "cap",
        f"""\
        rules:
          be:
            sections: [tool_call]
            queue_cap: 5
            dispatch: {{file: {{path: '{be}'}}}}
          alo:
            sections: [tool_call]
            queue_cap: 5
            delivery: at_least_once
            dispatch: {{file: {{path: '{alo}'}}}}
        """,
    )
    spool_directly(
        install,
        [("PreToolUse", payload("PreToolUse"))] * 50 + [("SessionEnd", payload("SessionEnd"))],
    )
    start_dispatcher(install).wait(timeout=60)
    assert [r["rule_seq"] for r in lines(be)] == list(range(46, 51))  # the gap shows
    assert [r["rule_seq"] for r in lines(alo)] == list(range(1, 51))
    assert counters_of(install, "cap/be")["drops"] == 45
    assert "dispatch.drop" in (install.state_root / "events.log").read_text()


@pytest.mark.slow
def test_sigkill_twenty_times_loses_nothing_at_least_once(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    install.sensor(
        "audit",
        f"""\
        enabled: true
        rules:
          all:
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )  # the shipped audit sensor: every section, at_least_once, chained
    base = payload("PreToolUse")
    calls = [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:05d}"}) for i in range(2000)]
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls[:400]])
    rnd = random.Random(20261129)
    kills = 0
    proc = start_dispatcher(install)
    while kills < 20:  # records keep coming (a batched drain outruns the kills otherwise)
        time.sleep(rnd.uniform(0.02, 0.4))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        proc = start_dispatcher(install)
        spool_directly(install, calls[320 + 80 * kills : 400 + 80 * kills])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    proc.wait(timeout=300)
    got = no_checkpoints(lines(out))
    seqs = {r["rule_seq"] for r in got}
    last = max(seqs)
    assert last == 2002  # session_start, 2000 tool calls, session_end
    assert seqs == set(range(1, last + 1)), f"missing {sorted(set(range(1, last + 1)) - seqs)[:10]}"
    assert kills >= 10, "the run finished before it could be killed enough"
    by_seq: dict[int, dict] = {}
    for r in got:  # a re-delivery is the same record: same seq, same hash
        assert by_seq.setdefault(r["rule_seq"], r) == r
    prev = "0" * 64
    for s in range(1, last + 1):
        assert by_seq[s]["chain"]["prev"] == prev
        prev = by_seq[s]["chain"]["hash"]
    r = install.ways("sensors", "verify", str(out), "--rule", "audit/all")
    assert r.returncode == 0, r.stdout


def test_consumer_down_for_the_whole_session_gets_everything_later(install, tmp_path):
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    port = free_port()
    install.sensor(
        "remote",
        f"""\
        rules:
          r:
            sections: [user_prompt, tool_call, session_end]
            delivery: at_least_once
            timeout: 1s
            dispatch: {{http: {{url: 'http://127.0.0.1:{port}/in'}}}}
        """,
    )
    play(install)  # nobody listens on the port for the whole session
    assert wait_until(lambda: (install.state_root / "pending" / SID).exists(), timeout=60)
    assert wait_until(lambda: not dispatcher_alive(install), timeout=30)
    assert SID in status(install)["pending_sessions"]
    server = Server("accept", port=port)
    try:
        other = "0e4b8f31-6a2c-4d7e-b915-3c8a2f6d1e70"
        play(install, ["SessionStart"], session_id=other)  # any later session's start
        got = server.wait_for(4, timeout=60)
        assert [r["section"] for r in got] == [
            "user_prompt",
            "tool_call",
            "tool_call",
            "session_end",
        ]
        assert [r["rule_seq"] for r in got] == [1, 2, 3, 4]
        assert wait_until(lambda: not (install.state_root / "pending" / SID).exists())
        assert counters_of(install, "remote/r")["retries"] >= 1
    finally:
        server.close()


def test_a_hostile_payload_never_blocks_the_records_behind_it(install, tmp_path):
    out = tmp_path / "o.jsonl"
    install.sensor(
        "f",
        f"rules:\n  r:\n    sections: [tool_call, session_end]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    deep = '{"d":' * 100_000 + '"x"' + "}" * 100_000  # deeper than any recursion limit
    hostile = json.dumps(payload("PreToolUse")).replace(
        '"tool_input": {', '"tool_input": {"n": ' + deep + ", ", 1
    )
    spool_directly(
        install,
        [
            ("PreToolUse", hostile.encode()),
            ("PreToolUse", payload("PreToolUse")),
            ("SessionEnd", payload("SessionEnd")),
        ],
    )
    start_dispatcher(install).wait(timeout=60)
    got = lines(out)
    assert [r["section"] for r in got] == ["tool_call", "session_end"]
    log = (install.state_root / "events.log").read_text()
    assert "dispatch.unreadable_payload" in log or "dispatch.unencodable_entry" in log


def _still_open(conn) -> bool:
    import socket

    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True  # nothing to read and no end of stream: open
    except OSError:
        return False


class Holding:
    """An HTTP server that reads each request and never answers: it holds the connection
    until the client closes it. Keeps [start, end, JSON body] per request (end None while
    open, times from time.monotonic()) and the most requests open at once."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/in"
        self.requests: list[list] = []
        self.most_open = 0
        self.conns: list = []  # connections whose request was read, not yet seen closed
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        while len(body) < length:
            body += conn.recv(65536)
        req = [time.monotonic(), None, json.loads(body)]
        with self.lock:
            self.requests.append(req)
            # open at once: the other connections whose client has not closed them, as the
            # kernel has it (a closed one peeks b""); the threads that note a close may run
            # after this one under load, so their count alone said 2 when it was 1
            self.most_open = max(self.most_open, 1 + sum(map(_still_open, self.conns)))
            self.conns.append(conn)
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass
        with self.lock:
            req[1] = time.monotonic()
            self.conns.remove(conn)
        conn.close()

    def close(self) -> None:
        self.sock.close()


def test_editing_a_rule_whose_consumer_hangs_stalls_no_rule(install, tmp_path):
    """The reload never waits for the edited rule's delivery in flight: another rule's
    next record arrives while it still hangs. The old worker ends its attempt under its
    own timeout and hands its pending record over on disk; the new one sends it then,
    never while the old attempt is open."""
    install.config("ways:\n  dispatch_idle_seconds: 60\n")
    server = Holding()
    fast = tmp_path / "fast.jsonl"

    def sensor(timeout: str) -> None:
        install.sensor(
            "two",
            f"""\
            rules:
              slow:
                sections: [tool_call]
                delivery: at_least_once
                timeout: {timeout}
                dispatch: {{http: {{url: '{server.url}'}}}}
              fast:
                sections: [tool_call]
                dispatch: {{file: {{path: '{fast}'}}}}
            """,
        )

    try:
        sensor("8s")
        play(install, ["PreToolUse"])
        assert wait_until(lambda: len(lines(fast)) == 1 and len(server.requests) == 1)
        sensor("9s")  # the slow rule changed: its worker is replaced
        play(install, ["PreToolUse"], tool_use_id="toolu_after_edit")
        assert wait_until(lambda: len(lines(fast)) == 2, timeout=30)
        seen = time.monotonic()
        first = server.requests[0]
        assert first[1] is None or first[1] > seen, "the reload waited for the hung attempt"
        assert wait_until(lambda: len(server.requests) == 2, timeout=30)
        second = server.requests[1]
        # the old attempt ended under its own 8 s timeout before the new one started:
        # said from the arrivals (the server notices the first one's close a moment
        # after the client gave up, so comparing with its end inverted under load; and
        # under load the thread that notes that close may run after the second arrived)
        assert second[0] - first[0] >= 7.5
        assert wait_until(lambda: first[1] is not None, timeout=10)  # it did end
        assert server.most_open == 1  # never two attempts of one rule at once
        assert second[2]["rule_seq"] == first[2]["rule_seq"] == 1  # handed over, same record
        assert counters_of(install, "two/slow")["timeouts"] == 1
    finally:
        server.close()


def test_an_idle_dispatcher_sleeps(install, tmp_path):
    """500 rules, nothing to do: the dispatcher's CPU time over 3 s stays far below what
    polling workers cost (about 0.18 s here for 500 rules, 1.2 s for 2,000: see
    bench/idle_bench.py)."""
    install.config("ways:\n  dispatch_idle_seconds: 600\n")
    out = tmp_path / "out"
    out.mkdir()
    install.sensor(
        "many",
        "rules:\n"
        + "".join(
            f"  r{i}:\n    sections: [tool_call]\n    timeout: 60s\n"
            f"    dispatch: {{file: {{path: '{out}/r{i}.jsonl'}}}}\n"
            for i in range(500)
        ),
    )
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(os.listdir(out)) == 500, timeout=120)
    time.sleep(3)  # past the build loop's fast polling after the last frame
    proc = psutil.Process(dispatcher_pid(install))
    before = proc.cpu_times()
    time.sleep(3)
    after = proc.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    assert used < 0.05, f"{used:.3f} s of CPU in 3 s idle"


def _plant(install, tmp_path, rel: str):
    """A link at `rel` under the state root to a bait file (its folders made private)."""
    at = install.state_root / rel
    at.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    for p in [install.state_root, *at.parents]:
        if p.is_relative_to(install.state_root):
            p.chmod(0o700)
    bait = tmp_path / "bait.json"
    bait.write_text("{}")
    at.symlink_to(bait)
    return bait


def test_a_refused_counters_file_never_holds_a_rules_records(install, tmp_path):
    """The rule's counters file is a planted link: the counts stay in memory (the refusal
    is logged), and the records are delivered all the same, the tree closed."""
    install.config("ways:\n  dispatch_idle_seconds: 1\n")
    install.sensor(
        "f",
        f"rules:\n  r:\n    sections: [tool_call, session_end]\n    chain: true\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o.jsonl'}}}}\n",
    )
    bait = _plant(install, tmp_path, "counters/f.r.json")
    play(install)
    out = tmp_path / "o.jsonl"
    assert wait_until(lambda: lines(out) and lines(out)[-1].get("end") is True)
    assert [r["section"] for r in lines(out) if r["section"] != "checkpoint"][-1] == "session_end"
    assert wait_until(lambda: not dispatcher_alive(install), timeout=60)
    assert bait.read_text() == "{}"
    assert not logged(install, "dispatch.worker_error")
