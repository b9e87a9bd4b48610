"""A session end for sessions that die, across the real processes: the hook as wired by
`ways reconcile` (sh, exec), run by a "client" process that is then SIGKILLed; the
detached dispatcher goes idle, finds the client gone and makes up one `session_end`
(reason lost, synthesized). A client that is alive, or that the hook cannot name (a new
parent per event), gets none; a real SessionEnd after a resume is still recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ways_sensors.commands.reconcile import hook_command

from ..conftest import LAUNCHER
from ..helpers import wait_until

SID = "7d3c2b1a-0f9e-4d8c-b7a6-5e4d3c2b1a09"
SECTIONS = (
    "user_prompt, queued_message, assistant_response, tool_call, tool_result, subagent, "
    "compaction, session_start, session_end, permission, notification, error"
)
CLIENT = """
import subprocess, sys
command, payloads = sys.argv[1], sys.argv[2:]
for p in payloads:
    subprocess.run(["sh", "-c", command], input=open(p, "rb").read(), check=True)
print("done", flush=True)
sys.stdin.read()  # alive until killed (or told to go)
"""


class Scene:
    def __init__(self, install, tmp: Path) -> None:
        self.install, self.tmp = install, tmp
        self.out = tmp / "out.jsonl"
        install.sensor(
            "all",
            f"rules:\n  r:\n    sections: [{SECTIONS}]\n"
            f"    dispatch: {{file: {{path: '{self.out}'}}}}\n    delivery: at_least_once\n",
        )
        install.config("ways:\n  dispatch_idle_seconds: 1\n")
        self.transcript = tmp / "projects" / "-home-dev-shop" / f"{SID}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.transcript.touch()
        self.command = hook_command(sys.executable, str(LAUNCHER))
        self.n = 0

    def half_a_reply(self) -> None:
        """The client's last lines: a prompt and the start of a reply no Stop answered."""
        lines = [
            {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go on"}},
            {"type": "assistant", "uuid": "a1", "message": {
                "id": "msg_1", "model": "claude-opus-5-5", "role": "assistant",
                "content": [{"type": "text", "text": "HALF-A-REPLY"}], "stop_reason": None,
                "usage": {"input_tokens": 7, "output_tokens": 3}}},
        ]  # fmt: skip
        with open(self.transcript, "a") as f:
            f.write("".join(json.dumps(x) + "\n" for x in lines))

    def payload(self, event: str, **fields) -> Path:
        self.n += 1
        path = self.tmp / f"p{self.n}.json"
        body = {"session_id": SID, "transcript_path": str(self.transcript),
                "cwd": str(self.install.project), "hook_event_name": event, **fields}  # fmt: skip
        path.write_text(json.dumps(body))
        return path

    def client(self, *payloads: Path) -> subprocess.Popen:
        """A client process that runs the hook for each payload, then stays alive."""
        proc = subprocess.Popen(
            [sys.executable, "-c", CLIENT, self.command, *map(str, payloads)],
            env=self.install.env,
            cwd=self.install.project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdout.readline() == b"done\n"
        return proc

    def records(self) -> list[dict]:
        if not self.out.exists():
            return []
        return [json.loads(x) for x in self.out.read_text().splitlines() if x.strip()]

    def ends(self) -> list[dict]:
        return [r for r in self.records() if r["section"] == "session_end"]

    def events(self) -> list[dict]:
        path = self.install.state_root / "events.log"
        if not path.exists():
            return []
        return [json.loads(x) for x in path.read_text().splitlines()]

    def exits(self) -> list[dict]:
        return [e for e in self.events() if e["kind"] == "dispatch.exit"]

    def age(self, seconds: float) -> None:
        """Make the transcript look untouched for `seconds`."""
        t = time.time() - seconds
        os.utime(self.transcript, (t, t))


@pytest.fixture
def scene(install, tmp_path):
    return Scene(install, tmp_path)


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdin.close()
    proc.stdout.close()


def test_a_killed_client_gets_one_made_up_end_and_a_resume_a_real_one(scene):
    client = scene.client(
        scene.payload("SessionStart", source="startup", model="claude-opus-5-5"),
        scene.payload("UserPromptSubmit", prompt="go on"),
    )
    scene.half_a_reply()
    scene.age(30)
    kill(client)
    assert wait_until(lambda: scene.ends(), 60), scene.events()
    assert wait_until(lambda: not (scene.install.sessions() / SID).exists(), 30)
    [end] = scene.ends()
    assert end["hook_event"] is None
    assert (end["data"]["reason"], end["data"]["synthesized"]) == ("lost", True)
    assert end["data"]["last_seen"] < end["timestamp"]
    records = scene.records()
    assert [r["section"] for r in records] == [
        "session_start", "user_prompt", "assistant_response", "session_end"]  # fmt: skip
    half = records[2]["data"]
    assert (half["text"], half["interrupted"], half["usage"]["input_tokens"]) == (
        "HALF-A-REPLY",
        True,
        7,
    )
    assert [e["kind"] for e in scene.events()].count("dispatch.session_lost") == 1
    time.sleep(2)  # idle periods pass: still once
    assert len(scene.ends()) == 1

    # resumed later (by a live client: pytest itself), and ended for real
    resume = scene.payload("SessionStart", source="resume")
    for p in (resume, scene.payload("SessionEnd", reason="other")):
        r = scene.install.hook(json.loads(p.read_text()))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(scene.ends()) == 2, 60)
    real = scene.ends()[1]
    assert (real["hook_event"], real["data"]["reason"]) == ("SessionEnd", "other")
    assert "synthesized" not in real["data"]
    seqs = [r["seq"] for r in scene.records()]
    assert seqs == list(range(1, len(seqs) + 1))


def test_a_live_client_gets_none(scene):
    client = scene.client(
        scene.payload("SessionStart", source="startup"),
        scene.payload("UserPromptSubmit", prompt="go on"),
    )
    try:
        scene.age(30)
        assert wait_until(lambda: scene.exits(), 60)
        assert scene.exits()[0]["reason"] == "idle"
        assert scene.ends() == []
    finally:
        kill(client)


def test_a_client_the_hook_cannot_name_gets_none(scene):
    """Each event from a parent of its own (a hook wired without exec has a shell of its
    own each time): which process is the client is unknown, so nothing is made up."""
    for p in (scene.payload("SessionStart", source="startup"),
              scene.payload("UserPromptSubmit", prompt="go on")):  # fmt: skip
        kill(scene.client(p))
    scene.age(30)
    assert wait_until(lambda: scene.exits(), 60)
    assert scene.exits()[-1]["reason"] == "idle"
    assert scene.ends() == []


def test_a_session_file_still_being_written_is_waited_for(scene):
    client = scene.client(
        scene.payload("SessionStart", source="startup"),
        scene.payload("UserPromptSubmit", prompt="go on"),
    )
    scene.half_a_reply()
    kill(client)
    # the client wrote its file until just now: the end waits for it to go quiet
    stop = time.monotonic() + 1.5  # past the idle period (1 s), within four of them
    while time.monotonic() < stop:
        os.utime(scene.transcript)
        assert scene.ends() == []
        time.sleep(0.2)
    assert wait_until(lambda: scene.ends(), 60)
    assert scene.ends()[0]["data"]["reason"] == "lost"
