"""Inputs the agent or the user controls, read the same way everywhere and within bounds.

Issue 12 defect 6: the hook (a raw-byte scan) and the dispatcher (a JSON parse) must
read one payload the same way: a key nested in another object never routes the event,
and a payload whose top-level object repeats a key is refused (logged), never routed by
one occurrence and built from the other. Issue 11 defect 10: a transcript path naming
/dev/zero, a FIFO or a huge file is read within a bound, and never costs the records
the payload alone makes. Everything here runs the real hook and the real dispatcher.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from ways_sensors.hook import string_field

from .conftest import payload
from .helpers import lines, wait_until

SID = payload("PreToolUse")["session_id"]


def sensor(install, out: Path, sections: str) -> None:
    install.sensor(
        "f",
        f"rules:\n  r:\n    sections: [{sections}]\n    dispatch: {{file: {{path: '{out}'}}}}\n",
    )


def raw(pairs: list[tuple[str, object]]) -> bytes:
    """A JSON object from (key, value) pairs, in order, repeats kept (json.dumps cannot)."""
    return ("{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in pairs) + "}").encode()


def hook_ok(install, data: bytes) -> None:
    r = install.hook(data)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def events_log(install) -> str:
    path = install.state_root / "events.log"
    return path.read_text() if path.exists() else ""


# --- the hook and the dispatcher read one payload the same way (issue 12, defect 6) ----


def test_a_nested_event_name_before_the_real_one_never_routes(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_call")  # no rule wants a Stop's sections
    p = payload("PreToolUse")
    pairs = [("x", {"hook_event_name": "Stop"}), *p.items()]
    hook_ok(install, raw(pairs))
    assert wait_until(lambda: len(lines(out)) == 1)
    rec = lines(out)[0]
    assert (rec["section"], rec["hook_event"]) == ("tool_call", "PreToolUse")
    assert rec["data"]["extra"]["x"] == {"hook_event_name": "Stop"}
    # the spool frame says what the record says
    from ways_sensors.state import spool

    seg = next((install.sessions() / SID / "spool").glob("*.seg"), None)
    if seg is not None:  # the dispatcher may have dropped a finished segment
        heads = [spool.parse_entry(b) for _, _, b in spool.scan_frames(seg.read_bytes())]
        assert all(e.event == "PreToolUse" for e in heads if e)


def test_a_nested_event_name_never_picks_the_blocking_rules(install, tmp_path):
    """The blocking path builds with the event the hook read: a nested name must not
    make a PreToolUse payload into an assistant_response."""
    out = tmp_path / "o.jsonl"
    install.sensor(
        "b",
        f"rules:\n  r:\n    sections: [assistant_response]\n    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    p = payload("PreToolUse")
    hook_ok(install, raw([("meta", {"hook_event_name": "Stop"}), *p.items()]))
    assert lines(out) == []  # the hook returns after its blocking rules ran
    hook_ok(install, json.dumps(payload("Stop")).encode())
    assert [r["hook_event"] for r in lines(out)] == ["Stop"]


def test_a_nested_session_id_never_picks_the_session(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_call")
    p = payload("PreToolUse")
    pairs = [("ctx", {"session_id": "someone-else"}), *p.items()]
    hook_ok(install, raw(pairs))
    assert wait_until(lambda: len(lines(out)) == 1)
    assert lines(out)[0]["session_id"] == SID
    assert not (install.sessions() / "someone-else").exists()


def test_a_repeated_top_level_event_name_is_refused_not_built_as_the_other(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_call, assistant_response, session_end")
    p = payload("PreToolUse")
    pairs = [*p.items(), ("hook_event_name", "Stop"), ("last_assistant_message", "forged")]
    hook_ok(install, raw(pairs))
    hook_ok(install, json.dumps(payload("PreToolUse")).encode())
    hook_ok(install, json.dumps(payload("SessionEnd")).encode())
    assert wait_until(lambda: any(r["section"] == "session_end" for r in lines(out)))
    got = lines(out)
    assert [r["section"] for r in got] == ["tool_call", "session_end"], got
    assert all("forged" not in json.dumps(r) for r in got)
    log = events_log(install)
    assert "payload.repeated_key" in log and "dispatch.unreadable_payload" in log
    assert "forged" not in log and "Stop" not in log.split("repeated_key", 1)[1][:200]


def test_a_repeated_top_level_session_id_is_refused(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_call, session_end")
    p = payload("PreToolUse")
    forged = {**p, "tool_use_id": "forged"}
    hook_ok(install, raw([*forged.items(), ("session_id", "other-session")]))
    hook_ok(install, json.dumps(payload("PreToolUse")).encode())
    hook_ok(install, json.dumps(payload("SessionEnd")).encode())
    assert wait_until(lambda: any(r["section"] == "session_end" for r in lines(out)))
    got = lines(out)
    assert [r["data"].get("tool_use_id") for r in got if r["section"] == "tool_call"] == [
        p["tool_use_id"]
    ]
    assert not (install.sessions() / "other-session").exists()


def test_a_repeated_key_is_refused_on_the_blocking_path_too(install, tmp_path):
    out = tmp_path / "o.jsonl"
    install.sensor(
        "b",
        f"rules:\n  r:\n    sections: [tool_call, assistant_response]\n    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    p = payload("PreToolUse")
    hook_ok(install, raw([*p.items(), ("hook_event_name", "Stop")]))
    assert lines(out) == []
    assert "payload.repeated_key" in events_log(install)
    hook_ok(install, json.dumps(p).encode())
    assert [r["section"] for r in lines(out)] == ["tool_call"]


def test_escaped_values_are_read_as_json_reads_them(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_call")
    text = json.dumps(payload("PreToolUse")).replace('"PreToolUse"', '"Pre\\u0054oolUse"')
    hook_ok(install, text.encode())
    assert wait_until(lambda: len(lines(out)) == 1)
    assert lines(out)[0]["hook_event"] == "PreToolUse"


class Obj(list):
    """A JSON object as (key, value) pairs: order and repeats kept."""


def _random_value(rng: random.Random, depth: int) -> object:
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return rng.choice(["hook_event_name", "session_id", 'a"b', "x\\", '\\"', "é☃", "\ud83d"])
    if kind == 1:
        return rng.choice([1, -2.5, True, None])
    if kind == 2:
        return '"hook_event_name": "Stop", "session_id": "evil"'
    if kind == 3:
        return "".join(rng.choice('ab"\\{}[]:,\n\u2028é😀/') for _ in range(rng.randrange(12)))
    if kind == 4:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["hook_event_name", "session_id", "k", 'q"', "\\"]
    return Obj((rng.choice(keys), _random_value(rng, depth + 1)) for _ in range(rng.randrange(4)))


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "/": "\\/"}


def _encode(rng: random.Random, v: object, literal_keys: bool = False) -> str:
    """JSON text of `v`, every string escaped at random in the ways JSON allows (short
    escapes, \\uXXXX, surrogate pairs), with random whitespace; `literal_keys`: this
    object's own keys are written as they are."""
    ws = rng.choice(["", " ", "\n ", "\t"])
    if isinstance(v, Obj):
        items = [
            f"{ws}{json.dumps(k) if literal_keys else _encode(rng, k)}{ws}:{ws}{_encode(rng, x)}"
            for k, x in v
        ]
        return "{" + ",".join(items) + ws + "}"
    if isinstance(v, list):
        return "[" + ",".join(ws + _encode(rng, x) for x in v) + ws + "]"
    if not isinstance(v, str):
        return json.dumps(v)
    out = []
    for c in v:
        must = c in '"\\' or ord(c) < 0x20
        if (must or c == "/") and c in _SHORT and rng.random() < 0.5:
            out.append(_SHORT[c])
        elif must or rng.random() < 0.15:
            if ord(c) > 0xFFFF:
                hi, lo = divmod(ord(c) - 0x10000, 0x400)
                out.append("\\u%04x\\u%04x" % (0xD800 + hi, 0xDC00 + lo))
            else:
                out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _top_level(text: str) -> tuple[dict, bool]:
    """json's reading of `text`, and whether its top-level object repeats a key."""
    repeats = [False]

    def pairs(p: list) -> dict:
        d = dict(p)
        repeats[0] = len(d) != len(p)
        return d

    return json.loads(text, object_pairs_hook=pairs), repeats[0]


def test_the_scan_agrees_with_json_on_every_top_level_string():
    """The hook's scan, property-tested against json on generated payloads: whatever
    nests, escapes or pads them, it reads a top-level string as json does, and never
    reads anything else. A top-level key spelled with escapes is not recognized (None:
    the hook then does not route the event), never read as something else."""
    from ways_sensors.records import parse_payload

    rng = random.Random(12)
    checked = 0
    for _ in range(4000):
        top = Obj(
            (rng.choice(["x", "hook_event_name", "session_id", "y"]), _random_value(rng, 0))
            for _ in range(rng.randrange(6))
        )
        if rng.random() < 0.7:
            name = rng.choice(["Stop", "PreTool", 'a"b', "é☃", "\\x", "😀", "\ud83d"])
            top.insert(rng.randrange(len(top) + 1), ("hook_event_name", name))
        literal = rng.random() < 0.7
        data = _encode(rng, top, literal).encode("utf-8", "surrogatepass")
        obj, repeats = _top_level(data.decode("utf-8", "surrogatepass"))
        if repeats:
            continue  # refused by the dispatcher's parse (tested through the processes)
        assert parse_payload(data) == obj
        checked += 1
        for key in ("hook_event_name", "session_id", "x"):
            want = obj.get(key)
            got = string_field(data, key.encode())
            want = want if isinstance(want, str) else None
            assert got == want or (got is None and not literal), (data, key)
    assert checked > 1500


# --- transcripts are read within bounds (issue 11, defect 10) ---------------------------

RSS_LIMIT = 200 << 20


class RssWatch:
    """Samples the RSS of this install's dispatchers while a test runs; one that passes
    the limit is killed at once (the test fails, and the machine is spared)."""

    def __init__(self, install) -> None:
        import threading

        self.root = str(install.root)
        self.peak = 0
        self.killed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _dispatchers(self) -> list:
        import psutil

        out = []
        for proc in psutil.process_iter(["cmdline", "environ"]):
            try:
                cmd = proc.info["cmdline"] or []
                env = proc.info["environ"] or {}
            except psutil.Error:
                continue
            if "dispatch" in cmd and self.root in env.get("XDG_STATE_HOME", ""):
                out.append(proc)
        return out

    def _run(self) -> None:
        import psutil

        procs: list = []
        while not self._stop.is_set():
            procs = [p for p in procs if p.is_running()] or self._dispatchers()
            for p in procs:
                try:
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                self.peak = max(self.peak, rss)
                if rss > RSS_LIMIT:
                    self.killed = True
                    p.kill()
            time.sleep(0.01)

    def __enter__(self) -> RssWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)  # a hole: no disk used, `size` bytes of NUL to a reader
    return path


def _transcript_target(kind: str, tmp_path: Path) -> str:
    import os

    if kind == "dev-zero":
        return "/dev/zero"
    if kind == "fifo":
        fifo = tmp_path / "t.fifo"
        os.mkfifo(fifo)  # no writer ever: an open without O_NONBLOCK waits forever
        return str(fifo)
    if kind == "symlink-to-sparse":
        link = tmp_path / "link.jsonl"
        link.symlink_to(_sparse(tmp_path / "huge.bin", 4 << 30))
        return str(link)
    return str(_sparse(tmp_path / "t.jsonl", 300 << 20))


@pytest.mark.parametrize("start", [True, False], ids=["with-start", "mid-session"])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "symlink-to-sparse", "sparse-300mb"])
def test_a_hostile_transcript_path_costs_no_record_and_no_memory(install, tmp_path, kind, start):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "session_start, tool_result, assistant_response, session_end")
    path = _transcript_target(kind, tmp_path)
    names = ["SessionStart", "PostToolUse", "Stop", "SessionEnd"] if start else []
    names = names or ["PostToolUse", "PostToolUse", "Stop", "SessionEnd"]
    with RssWatch(install) as watch:
        for name in names:
            hook_ok(install, json.dumps({**payload(name), "transcript_path": path}).encode())
        assert wait_until(
            lambda: any(r["section"] == "session_end" for r in lines(out)) or watch.killed,
            timeout=60,
        )
    assert not watch.killed, f"dispatcher passed {RSS_LIMIT >> 20} MB"
    assert watch.peak < RSS_LIMIT
    want = [
        {"SessionStart": "session_start", "PostToolUse": "tool_result"}.get(n)
        or {"Stop": "assistant_response", "SessionEnd": "session_end"}[n]
        for n in names
    ]
    assert [r["section"] for r in lines(out)] == want
    if kind in ("dev-zero", "fifo"):
        log = events_log(install)
        assert "transcript.unreadable" in log and path not in log


def test_a_line_over_the_cap_is_skipped_and_counted_and_the_next_lines_read(install, tmp_path):
    out = tmp_path / "o.jsonl"
    sensor(install, out, "tool_result, queued_message")
    path = tmp_path / "t.jsonl"
    huge = json.dumps({"type": "user", "message": {"content": "x" * (20 << 20)}})
    enqueue = {"type": "queue-operation", "operation": "enqueue", "content": "typed meanwhile"}
    remove = {"type": "queue-operation", "operation": "remove"}
    ts = {"timestamp": "2026-01-01T00:00:00.000Z"}
    path.write_text(
        "\n".join([huge, json.dumps({**enqueue, **ts}), json.dumps({**remove, **ts})]) + "\n"
    )
    p = {**payload("PostToolUse"), "transcript_path": str(path)}
    with RssWatch(install) as watch:
        for _ in range(6):  # 8 MB read per event at most: the skip takes three
            hook_ok(install, json.dumps(p).encode())
        assert wait_until(
            lambda: any(r["section"] == "queued_message" for r in lines(out)) or watch.killed
        )
    assert not watch.killed and watch.peak < RSS_LIMIT
    got = lines(out)
    assert [r["data"]["text"] for r in got if r["section"] == "queued_message"] == [
        "typed meanwhile"
    ]
    assert sum(r["section"] == "tool_result" for r in got) >= 1
    log = events_log(install)
    assert "transcript.line_too_long" in log and "typed" not in log
