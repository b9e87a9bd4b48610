"""Batched delivery with group commit, through the real dispatcher, real loopback servers
and real files: whole batches retried, parked, lost, re-sent after SIGKILL; the http
target's batch formats; OTLP requests of many records; a cut line mended."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ways_sensors.dispatch.cursor import encode_batch
from ways_sensors.targets import ACCEPTED, Context, Item
from ways_sensors.targets import file as file_target

from .conftest import ALL_SECTIONS, payload
from .helpers import (
    counters_of,
    lines,
    logged,
    no_checkpoints,
    spool_directly,
    start_dispatcher,
    status,
    wait_until,
)
from .servers import Server

SECTIONS = "[" + ", ".join(ALL_SECTIONS) + "]"
N = 12  # records spooled before the dispatcher starts: its first batch takes them all


@pytest.fixture
def dispatch(install):
    """Start the session's dispatcher (a real detached process); stopped at the end."""
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        procs.append(start_dispatcher(install))
        return procs[-1]

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def calls(n: int, start: int = 0) -> list[tuple[str, dict]]:
    base = payload("PreToolUse")
    return [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:05d}"}) for i in range(start, n)]


def log_bodies(obj: dict) -> list[dict]:
    """The records an OTLP request carried (each log record's body), in order."""
    return [
        json.loads(lr["body"]["stringValue"])
        for rl in obj["resourceLogs"]
        for sl in rl["scopeLogs"]
        for lr in sl["logRecords"]
    ]


def dead_letters(install, rule: str) -> list[dict]:
    [entry] = [d for d in status(install)["dead_letters"] if d["rule"] == rule]
    return [json.loads(x) for x in Path(entry["path"]).read_text().splitlines()]


# --- whole batches through a scripted consumer ---------------------------------------


def http_rule(install, url: str, **extra: str) -> None:
    more = "".join(f"            {k}: {v}\n" for k, v in extra.items())
    install.sensor(
        "remote",
        f"""\
        rules:
          r:
            sections: [tool_call]
            chain: true
            batch: {{max_records: 100}}
            dispatch: {{http: {{url: '{url}'}}}}
{more}""",
    )


def test_a_503_then_200_delivers_the_whole_batch_once_accepted(install, dispatch):
    server = Server("script", script=[(503, {"Retry-After": "1"})])
    try:
        http_rule(install, server.url, delivery="at_least_once")
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: counters_of(install, "remote/r")["delivered"] == N)
        (t1, s1, first), (t2, s2, again) = server.attempts
        assert (s1, s2) == (503, 200) and t2 - t1 >= 0.8  # Retry-After, not the 0.25 s backoff
        assert again == first  # the same records, rule_seq and hashes: retried whole
        assert first[-1]["section"] == "checkpoint"  # the batch's signed checkpoint, last
        first = no_checkpoints(first)
        assert isinstance(first, list) and len(first) == N  # one request for the batch
        assert [r["rule_seq"] for r in first] == list(range(1, N + 1))
        assert server.headers[0]["content-type"] == "application/json"
        c = counters_of(install, "remote/r")
        assert (c["dispatched"], c["retries"], c["refusals"], c["rejected"]) == (N, 1, 1, 0)
    finally:
        server.close()


def test_a_400_dead_letters_the_whole_batch_and_the_rule_moves_on(install, dispatch):
    """A refused batch is tried again one record at a time (one record's trouble must not
    park the others); refused each time, every record is parked, in order."""
    # 400 to the batch and to each record alone, with room for an attempt cut by a loaded
    # machine's timeout (retried, so answered twice); cleared before the later records
    server = Server("script", script=[(400, {})] * (2 * N + 1))
    try:
        http_rule(install, server.url, delivery="at_least_once")
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: counters_of(install, "remote/r")["rejected"] >= N)
        server.script.clear()  # from here on every request is accepted
        letters = dead_letters(install, "remote/r")
        assert {p["reason"] for p in letters} == {"HTTP 400"}
        # as sent (the batch's checkpoint, tried alone last, parked too when a 400 was
        # left for it: kept like a record, and counted in `rejected` as status counts it)
        parked = no_checkpoints([p["record"] for p in letters])
        assert len(letters) - len(parked) <= 1
        assert parked == no_checkpoints(server.attempts[0][2])
        assert [p["rule_seq"] for p in parked] == list(range(1, N + 1))
        spool_directly(install, calls(N + 3, start=N))  # the rule goes on with the next ones
        assert wait_until(lambda: sum(len(no_checkpoints(b)) for b in server.bodies) == 3)
        later = no_checkpoints([r for batch in server.bodies for r in batch])
        assert [r["rule_seq"] for r in later] == [N + 1, N + 2, N + 3]
        assert later[0]["chain"]["prev"] == parked[-1]["chain"]["hash"]
        assert wait_until(lambda: counters_of(install, "remote/r")["delivered"] == 3)
        c = counters_of(install, "remote/r")
        parked_now = len(dead_letters(install, "remote/r"))
        assert (c["rejected"], c["retries"]) == (parked_now, c["timeouts"])  # never retried
    finally:
        server.close()


def test_best_effort_makes_one_attempt_per_batch_and_counts_each_record_lost(install, dispatch):
    server = Server("script", script=[(503, {})])
    try:
        http_rule(install, server.url)  # best_effort, the default
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: counters_of(install, "remote/r")["lost"] == N)
        spool_directly(install, calls(N + 2, start=N))
        assert wait_until(lambda: sum(len(no_checkpoints(b)) for b in server.bodies) == 2)
        got = no_checkpoints([r for batch in server.bodies for r in batch])
        assert [r["rule_seq"] for r in got] == [N + 1, N + 2]
        (_, status_, first), *later = server.attempts
        assert (status_, len(no_checkpoints(first))) == (503, N)  # never sent again
        assert {s for _, s, _ in later} == {200}
        assert wait_until(lambda: counters_of(install, "remote/r")["delivered"] == 2)
        c = counters_of(install, "remote/r")
        assert (c["lost"], c["retries"]) == (N, 0)
    finally:
        server.close()


# --- the http target's batch formats ----------------------------------------------------


class Recorder:
    """A loopback HTTP server keeping every request's path, content type and raw body
    (tests/servers.py parses JSON bodies; NDJSON is not one)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests.append((self.path, self.headers.get("content-type", ""), body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[tuple[str, bytes]]:
        return [(ct, body) for p, ct, body in self.requests if p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_http_formats_a_batch_as_a_json_array_or_ndjson_and_unbatched_as_objects(install, dispatch):
    rec = Recorder()
    try:
        install.sensor(
            "remote",
            f"""\
            rules:
              arr:
                sections: [tool_call]
                batch: {{max_records: 100}}
                dispatch: {{http: {{url: '{rec.url}/arr'}}}}
              nd:
                sections: [tool_call]
                batch: {{max_records: 100}}
                dispatch: {{http: {{url: '{rec.url}/nd', format: ndjson}}}}
              one:
                sections: [tool_call]
                dispatch: {{http: {{url: '{rec.url}/one', format: ndjson}}}}
            """,
        )
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: len(rec.to("/one")) == N and rec.to("/arr") and rec.to("/nd"))
        [(ct, body)] = rec.to("/arr")
        assert ct == "application/json"
        assert [r["rule_seq"] for r in json.loads(body)] == list(range(1, N + 1))
        [(ct, body)] = rec.to("/nd")
        assert ct == "application/x-ndjson" and body.endswith(b"\n")
        assert [json.loads(x)["rule_seq"] for x in body.splitlines()] == list(range(1, N + 1))
        # a rule without `batch` posts one JSON object per request, whatever its format
        objs = [json.loads(body) for _, body in rec.to("/one")]
        assert [o["rule_seq"] for o in objs] == list(range(1, N + 1))
    finally:
        rec.close()


def test_a_batched_command_runs_once_per_batch_or_once_per_record_with_args(
    install, tmp_path, dispatch
):
    stdin_out, args_out = tmp_path / "stdin.txt", tmp_path / "args.txt"
    install.sensor(
        "cmd",
        f"""\
        rules:
          stdin:
            sections: [tool_call]
            batch: {{max_records: 100}}
            dispatch: {{command: {{argv: [sh, -c, 'cat >> {stdin_out}; echo run >> {stdin_out}']}}}}
          args:
            sections: [tool_call]
            batch: {{max_records: 100}}
            dispatch:
              command:
                argv: [sh, -c, 'printf "%s\\nrun\\n" "$1" >> {args_out}', sh]
                input: args
        """,
    )
    spool_directly(install, calls(N))
    dispatch()
    done = lambda p: p.exists() and p.read_text().count("run\n") >= (1 if p == stdin_out else N)  # noqa: E731
    assert wait_until(lambda: done(stdin_out) and done(args_out))
    *recs, end = stdin_out.read_text().splitlines()  # one run: the batch as NDJSON
    assert end == "run" and [json.loads(r)["rule_seq"] for r in recs] == list(range(1, N + 1))
    got = args_out.read_text().splitlines()  # one run per record, the record its argument
    assert got[1::2] == ["run"] * N
    assert [json.loads(r)["rule_seq"] for r in got[0::2]] == list(range(1, N + 1))


# --- OTLP: many records per request -------------------------------------------------------


def otlp_rule(install, server: Server) -> None:
    install.sensor(
        "ship",
        f"""\
        rules:
          otel:
            sections: [tool_call]
            delivery: at_least_once
            chain: true
            timeout: 30s
            dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}'}}}}
        """,
    )  # no `batch`: the otlp default, 512 records and 200 ms


def test_otlp_batches_decode_carry_their_checkpoint_and_verify(install, dispatch, tmp_path):
    server = Server("otlp")
    try:
        otlp_rule(install, server)
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == N)
        assert server.errors == []  # decoded with the official definitions, camelCase keys
        # a backlog may start going before all of it is built: one request per batch
        assert 1 <= len(server.requests) <= 3
        logs = []
        for req in server.requests:
            batch = [
                lr for rl in req.resource_logs for sl in rl.scope_logs for lr in sl.log_records
            ]
            assert batch[-1].event_name == "ways.sensor.checkpoint"  # in-band, a log record
            logs += list(batch)
        seqs = [
            next(a.value.int_value for a in lr.attributes if a.key == "ways.rule_seq")
            for lr in logs
            if lr.event_name != "ways.sensor.checkpoint"
        ]
        assert seqs == list(range(1, N + 1))
        out = tmp_path / "bodies.jsonl"
        out.write_text("".join(lr.body.string_value + "\n" for lr in logs))
        r = install.ways("sensors", "verify", str(out))
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        server.close()


def test_otlp_partial_success_of_a_batch_is_counted_rejected_never_retried(install, dispatch):
    answer = b'{"partialSuccess":{"rejectedLogRecords":"3","errorMessage":"too old"}}'
    server = Server("otlp", script=[(200, {}, answer)])
    try:
        otlp_rule(install, server)
        spool_directly(install, calls(N))
        dispatch()
        assert wait_until(lambda: counters_of(install, "ship/otel")["rejected"] == 3)
        c = counters_of(install, "ship/otel")
        assert (c["delivered"], c["retries"]) == (N - 3, 0)
        assert len(server.attempts) == 1
        [partial] = [e for e in logged(install) if e["kind"] == "dispatch.partial"]
        # the attempt carried N records (and the batch's checkpoint, not counted)
        assert (partial["records"], partial["rejected"], partial["rule_seq"]) == (N, 3, 1)
    finally:
        server.close()


def test_a_dispatcher_killed_mid_batch_sends_the_same_batch_again(install, dispatch):
    server = Server("otlp", script=[(None, {})])  # the first request never gets an answer
    try:
        otlp_rule(install, server)
        spool_directly(install, calls(N))
        proc = dispatch()
        assert wait_until(lambda: len(server.attempts) == 1)  # the batch is in flight
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        dispatch()
        assert wait_until(lambda: counters_of(install, "ship/otel")["delivered"] == N)
        sent, again = server.attempts[0][2], server.attempts[1][2]
        assert len(no_checkpoints(log_bodies(sent))) == N  # the whole batch was in flight
        assert log_bodies(again) == log_bodies(sent)  # same rule_seq, same hashes
        assert len(server.attempts) == 2
    finally:
        server.close()


# --- SIGKILL twenty times ------------------------------------------------------------------


@pytest.mark.slow
def test_sigkill_twenty_times_during_batched_delivery_loses_nothing(install, dispatch, tmp_path):
    out = tmp_path / "audit.jsonl"
    server = Server("otlp")
    try:
        install.sensor(
            "batch",
            f"""\
            rules:
              to-file:
                sections: {SECTIONS}
                delivery: at_least_once
                chain: true
                batch: {{max_records: 64}}
                dispatch: {{file: {{path: '{out}'}}}}
              to-otlp:
                sections: {SECTIONS}
                delivery: at_least_once
                chain: true
                timeout: 30s
                batch: {{max_records: 64, max_delay: 50ms}}
                dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}'}}}}
            """,
        )
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(400)])
        rnd = random.Random(20261130)
        proc = dispatch()
        for kill in range(20):  # records keep coming, so every kill finds work in flight
            time.sleep(rnd.uniform(0.02, 0.4))
            assert proc.poll() is None
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc = dispatch()
            spool_directly(install, calls(500 + 100 * kill, start=400 + 100 * kill))
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        proc.wait(timeout=300)
        want = set(range(1, 2403))  # session_start, 2400 tool calls, session_end
        got = [r for r in lines(out) if r["section"] != "checkpoint"]  # outside the chain
        assert {r["rule_seq"] for r in got} == want
        r = install.ways("sensors", "verify", str(out), "--rule", "batch/to-file")
        assert r.returncode == 0, r.stdout

        assert server.errors == []
        sent = [log_bodies(obj) for _, status_, obj in server.attempts if status_ == 200]
        assert max(len(b) for b in sent) > 1  # batches, not one record per request
        bodies = [rec for batch in sent for rec in batch if rec["section"] != "checkpoint"]
        assert {b["rule_seq"] for b in bodies} == want
        by_seq: dict[int, dict] = {}
        for b in bodies:  # a re-sent batch is the same records: same rule_seq, same hash
            assert by_seq.setdefault(b["rule_seq"], b) == b
        flat = tmp_path / "otlp-bodies.jsonl"
        flat.write_text("".join(json.dumps(b) + "\n" for b in bodies))
        v = install.ways("sensors", "verify", str(flat), "--json")
        assert v.returncode == 0, v.stdout
        [chain_] = json.loads(v.stdout)["chains"]
        assert chain_["duplicates"] == len(bodies) - len(want)
    finally:
        server.close()


# --- the file target: a cut line, mended ---------------------------------------------------


def items(n: int, size: int = 100) -> list[Item]:
    out = []
    for i in range(n):
        rec = {"rule_seq": i + 1, "pad": "x" * size}
        out.append(Item(rec, json.dumps(rec).encode()))
    return out


CTX = Context("a", "b", session_id="s", date="2026-11-30")


def test_a_cut_json_record_is_truncated_and_other_unended_lines_are_kept(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"rule_seq":1}\n{"rule_seq":2,"pad":"xx')  # a record cut mid-line
    spec = file_target.FileTarget(path=str(path))
    assert file_target.deliver(spec, items(2), CTX, time.monotonic() + 5).status == ACCEPTED
    got = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["rule_seq"] for r in got] == [1, 1, 2]

    other = tmp_path / "other.jsonl"
    other.write_bytes(b"some program's line without a newline")  # not a record of ours
    spec = file_target.FileTarget(path=str(other))
    assert file_target.deliver(spec, items(1), CTX, time.monotonic() + 5).status == ACCEPTED
    assert other.read_bytes().splitlines()[0] == b"some program's line without a newline"
    assert json.loads(other.read_bytes().splitlines()[1])["rule_seq"] == 1

    text = tmp_path / "out.log"
    text.write_bytes(b"2026-11-30T00:00:00Z #1 tool_call main Bash ech")
    spec = file_target.FileTarget(path=str(text), format="text")
    assert file_target.deliver(spec, items(1), CTX, time.monotonic() + 5).status == ACCEPTED
    assert text.read_bytes().startswith(b"2026-11-30T00:00:00Z #1 tool_call main Bash ech\n")


WRITER = """
import json, sys, time
from ways_sensors.targets import Context, Item, file
recs = [{"rule_seq": i + 1, "pad": "x" * 65536} for i in range(int(sys.argv[2]))]
batch = [Item(r, json.dumps(r).encode()) for r in recs]
print("ready", flush=True)
file.deliver(file.FileTarget(path=sys.argv[1]), batch, Context("a", "b"), time.monotonic() + 60)
"""


def test_a_writer_killed_mid_batch_leaves_a_cut_line_that_the_resend_mends(tmp_path):
    path = tmp_path / "out.jsonl"
    n = 2048  # 128 MiB in one write(): SIGKILL lands inside it
    for _ in range(5):
        path.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(n)], stdout=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        while not path.exists() or path.stat().st_size == 0:
            time.sleep(0.0005)
        proc.kill()
        proc.wait()
        proc.stdout.close()
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            break  # cut mid-line, as a dispatcher killed mid-batch leaves it
    else:
        pytest.fail("the kernel never cut the write short")
    whole = data.count(b"\n")
    spec = file_target.FileTarget(path=str(path))
    batch = items(n, 65536)
    assert file_target.deliver(spec, batch, CTX, time.monotonic() + 60).status == ACCEPTED
    seqs = [json.loads(x)["rule_seq"] for x in path.read_bytes().splitlines()]  # all whole
    assert seqs == list(range(1, whole + 1)) + list(range(1, n + 1))


# --- the pending batch's file -------------------------------------------------------------


def test_a_pending_batch_with_a_lone_surrogate_keeps_its_file_utf8():
    recs = [{"rule_seq": 1, "data": "ok"}, {"rule_seq": 2, "data": "echo \ud800"}]
    lines_ = [json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass") for r in recs]
    raw = encode_batch(recs, lines_)
    back = [json.loads(x) for x in raw.decode("utf-8").splitlines()]  # strict UTF-8
    assert back == recs  # the same records
    assert (
        encode_batch(recs[:1], None).decode("utf-8") == json.dumps(recs[0]).replace(" ", "") + "\n"
    )
