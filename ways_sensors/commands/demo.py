"""`ways demo`: a scripted Claude Code session through the real hook, dispatcher and consumers.

A throwaway install (temporary HOME and XDG roots), a demo sensor with a file, a
loopback HTTP and a command consumer, and a session (prompt, tool calls including a
failing one and one carrying a fake token, a subagent, a stop, a compaction, session
end) fed through `ways hook sensors` as separate processes, exactly as Claude Code runs
it. Then what each consumer received, and `ways status`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from ..dispatch.launch import launcher_path
from ..roots import APP
from ..state.layout import Layout

SENSOR = """\
# The demo's sensor: three rules, three kinds of consumer.
spec: 1
kind: ways
description: ways demo
rules:
  audit:
    sections: [user_prompt, queued_message, assistant_response, tool_call, tool_result,
               subagent, compaction, session_start, session_end]
    dispatch:
      file: {{path: "{out}/audit/{{session_id}}.jsonl"}}
    delivery: at_least_once
    chain: true
  dashboard:
    sections: [tool_call, tool_result, subagent]
    dispatch:
      http: {{url: "{url}"}}
  failures:
    sections: [tool_result]
    where:
      data.status: failure
    dispatch:
      command:
        argv: [{python}, -c, "{append}"]
"""


class Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        Collector.received.append(json.loads(body))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:  # keep the demo's output to what it shows
        pass


def script(sid: str, project: str, transcript: str) -> tuple[list[Any], dict[str, Any]]:
    """(payload, transcript lines written before it) for each hook event of the session."""
    common = {"session_id": sid, "transcript_path": transcript, "cwd": project}
    agent = {"agent_id": "a3f9c2e18b7d4a6e0", "agent_type": "Explore"}

    def user(text: str) -> dict[str, Any]:
        return {
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "timestamp": now(),
            "message": {"role": "user", "content": text},
            "origin": {"kind": "human"},
        }

    def said(text: str, mid: str) -> dict[str, Any]:
        return {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "timestamp": now(),
            "message": {
                "id": mid,
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            },
        }

    token = "ghp_" + "Zq4v" * 9
    bash = {
        "tool_name": "Bash",
        "tool_use_id": "toolu_demo_1",
        "tool_input": {"command": f"git push https://x:{token}@example.invalid/r.git"},
    }
    fail = {
        "tool_name": "Bash",
        "tool_use_id": "toolu_demo_2",
        "tool_input": {"command": "npm test"},
    }
    task = {
        "tool_name": "Agent",
        "tool_use_id": "toolu_demo_3",
        "tool_input": {"prompt": "find the callers", "subagent_type": "Explore"},
    }
    grep = {
        "tool_name": "Grep",
        "tool_use_id": "toolu_demo_4",
        "tool_input": {"pattern": "send\\(", "path": project},
    }
    return [
        ({"hook_event_name": "SessionStart", "source": "startup", "model": "demo-model"}, []),
        (
            {"hook_event_name": "UserPromptSubmit", "prompt": "Push the branch, run the tests"},
            [user("Push the branch, run the tests")],
        ),
        ({"hook_event_name": "PreToolUse", **bash}, [said("Pushing first.", "m1")]),
        (
            {
                "hook_event_name": "PostToolUse",
                **bash,
                "tool_response": {"stdout": "pushed", "stderr": ""},
            },
            [],
        ),
        ({"hook_event_name": "PreToolUse", **fail}, []),
        (
            {
                "hook_event_name": "PostToolUseFailure",
                **fail,
                "error": "Exit code 1\n1 failing test",
            },
            [
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": now(),
                    "content": "also check the lint",
                },
                {
                    "type": "queue-operation",
                    "operation": "remove",
                    "timestamp": now(),
                    "content": "also check the lint",
                },
            ],
        ),
        ({"hook_event_name": "PreToolUse", **task}, []),
        ({"hook_event_name": "SubagentStart", **agent}, []),
        ({"hook_event_name": "PreToolUse", **agent, **grep}, []),
        ({"hook_event_name": "PostToolUse", **agent, **grep, "tool_response": {"numFiles": 2}}, []),
        (
            {
                "hook_event_name": "SubagentStop",
                **agent,
                "last_assistant_message": "2 callers: notify.ts and hooks.ts",
            },
            [],
        ),
        ({"hook_event_name": "PostToolUse", **task, "tool_response": {"status": "completed"}}, []),
        (
            {"hook_event_name": "Stop", "last_assistant_message": "Pushed; 1 test fails."},
            [said("Pushed; 1 test fails.", "m2")],
        ),
        (
            {
                "hook_event_name": "PreCompact",
                "trigger": "manual",
                "custom_instructions": "keep the test failure",
            },
            [],
        ),
        ({"hook_event_name": "SessionStart", "source": "compact"}, []),
        ({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, []),
    ], common


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def summary(rec: dict[str, Any]) -> str:
    if rec.get("section") == "checkpoint":  # a chained batch's signed checkpoint
        size = str(rec.get("checkpoint", "")).split("\n")[1:2] or ["?"]
        return f"  checkpoint: the first {size[0]} records signed (key epoch {rec.get('epoch')})"
    d = rec.get("data", {})
    what = (
        d.get("tool_name")
        or d.get("prompt")
        or d.get("text")
        or d.get("phase")
        or d.get("source")
        or d.get("reason")
        or ""
    )
    if rec["section"] == "tool_call":
        what = f"{d.get('tool_name')} {json.dumps(d.get('input'))[:70]}"
    if rec["section"] == "tool_result":
        what = f"{d.get('tool_name')} {d.get('status')}"
    agent = rec.get("agent_type", "")
    masked = f"  masked: {[r['kind'] for r in rec['redactions']]}" if rec.get("redactions") else ""
    return (
        f"  #{rec.get('rule_seq'):<3} seq {rec.get('seq')!s:<3} {rec['section']:<19} "
        f"{agent:<9} {str(what)[:80]}{masked}"
    )


def run(args: argparse.Namespace) -> int:
    root = Path(tempfile.mkdtemp(prefix="ways-demo-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return _run(root, f"http://127.0.0.1:{server.server_address[1]}/records")
    finally:
        server.shutdown()
        if args.keep:
            print(f"\nthe throwaway install is kept in {root}")
        else:  # the paths above are gone now: say so, and how to keep them
            shutil.rmtree(root, ignore_errors=True)
            print(f"\nthe throwaway install {root} is removed; `ways demo --keep` keeps it")


def _run(root: Path, url: str) -> int:
    project = root / "project"
    out = root / "received"
    for d in (project, out, root / "home"):
        d.mkdir(parents=True)
    env = dict(
        os.environ,
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        CLAUDE_PROJECT_DIR=str(project),
        NO_COLOR="1",
    )
    os.environ.update(env)  # this process is the demo's too (`ways status` below)
    sensors = root / "config" / "agent-ways" / "sensors"
    sensors.mkdir(parents=True)
    append = f"import sys; open('{out}/failures.jsonl', 'a').write(sys.stdin.read())"
    (sensors / "demo.yaml").write_text(
        SENSOR.format(out=out, url=url, python=sys.executable, append=append)
    )
    sid = str(uuid.uuid4())
    transcript = root / "home" / ".claude" / "projects" / "demo" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.touch()
    steps, common = script(sid, str(project), str(transcript))

    print(f"ways demo: a throwaway install in {root}")
    print(f"session {sid}: {len(steps)} hook events through `ways hook sensors`\n")
    hook = [sys.executable, "-S", launcher_path(), "hook", "sensors"]
    for payload, lines in steps:
        with open(transcript, "a") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        body = json.dumps({**common, **payload}).encode()
        t = time.perf_counter()
        r = subprocess.run(hook, input=body, capture_output=True, env=env, cwd=project)
        ms = (time.perf_counter() - t) * 1000
        print(
            f"  hook {payload['hook_event_name']:<19} exit {r.returncode}  "
            f"stdout {len(r.stdout)} bytes  {ms:5.1f} ms"
        )
    session_dir = Path(Layout(f"{root}/state/{APP}").session_dir(sid))
    deadline = time.monotonic() + 30
    while session_dir.exists() and time.monotonic() < deadline:
        time.sleep(0.05)

    audit = (
        [json.loads(x) for x in (out / "audit" / f"{sid}.jsonl").read_text().splitlines()]
        if (out / "audit" / f"{sid}.jsonl").exists()
        else []
    )
    failures = (
        [json.loads(x) for x in (out / "failures.jsonl").read_text().splitlines()]
        if (out / "failures.jsonl").exists()
        else []
    )
    for title, recs in (
        (f"file consumer ({out}/audit/<session>.jsonl, chained)", audit),
        (f"http consumer ({url})", Collector.received),
        ("command consumer (failures only)", failures),
    ):
        n = sum(r.get("section") != "checkpoint" for r in recs)
        print(f"\n{title}: {n} records")
        for rec in recs:
            print(summary(rec))
    print("\nways status:")
    from . import status

    status.run(type("Args", (), {"json": False})())
    ok = bool(audit) and bool(Collector.received) and bool(failures)
    return 0 if ok else 1
