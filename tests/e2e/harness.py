"""Driving the real Claude Code client through a scripted session wired by `ways reconcile`.

The client comes from the npm registry at a pinned version, installed once into
`<repo>/.e2e/claude-code` (or $WAYS_CLAUDE_DIR; $CLAUDE_BIN names an existing one).
Each session runs in a throwaway HOME whose `~/.claude/settings.json` was written by
`ways reconcile`, with one more handler on the same events: a raw recorder that
appends exactly what Claude Code sent (the ground truth).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ways_sensors.agents.claude_code.wiring import EVENTS, TOOL_EVENTS

from . import messages_api

VERSION = "2.1.332"
REPO = Path(__file__).resolve().parent.parent.parent
PROMPTS = [
    "first [secret] push it",
    "[par] two things",
    "[sub] delegate",
    "[fail] break",
    "/compact keep it short",
    "plain",
]
RECORDER = (
    "import os,sys; d=sys.stdin.buffer.read().strip(); "
    "fd=os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND|os.O_CREAT, 0o600); "
    "os.write(fd, d+b'\\n'); os.close(fd)"
)


def claude_bin() -> str:
    """The pinned client, installed with npm on first use (Node.js 18+ and npm needed)."""
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    folder = Path(os.environ.get("WAYS_CLAUDE_DIR", REPO / ".e2e" / "claude-code"))
    exe = folder / "node_modules" / ".bin" / "claude"
    if exe.exists():
        return str(exe)
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("the end-to-end suite needs Node.js 18+ and npm on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(folder),
            f"@anthropic-ai/claude-code@{VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if r.returncode != 0 or not exe.exists():
        raise RuntimeError(
            f"npm could not install @anthropic-ai/claude-code@{VERSION}: " + r.stderr[-1000:]
        )
    return str(exe)


@dataclass
class Session:
    root: Path
    env: dict[str, str]
    truth_path: Path
    audit_dir: Path
    session_id: str | None = None
    results: list[dict] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def truth(self) -> list[dict]:
        out = []
        for line in self.truth_path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def records(self) -> list[dict]:
        path = self.audit_dir / f"{self.session_id}.jsonl"
        got = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        return [r for r in got if r.get("section") != "checkpoint"]  # signed, per batch

    def transcript(self) -> Path:
        return next((self.home / ".claude" / "projects").glob(f"*/{self.session_id}.jsonl"))

    def ways(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(Path(sys.executable).parent / "ways"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            cwd=self.project,
            timeout=120,
        )


def add_handlers(s: Session, commands: list[str]) -> None:
    """More handlers on the same events, in their own group."""
    path = s.home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for event in EVENTS:
        hooks = [{"type": "command", "timeout": 15, "command": c} for c in commands]
        group = {"matcher": "*", "hooks": hooks} if event in TOOL_EVENTS else {"hooks": hooks}
        settings["hooks"][event].append(group)
    path.write_text(json.dumps(settings, indent=2))


SECTIONS = (
    "user_prompt, queued_message, assistant_response, tool_call,\n"
    "               tool_result, subagent, compaction, session_start, session_end,\n"
    "               permission, notification, error"
)


def prepare(root: Path, idle: float = 5) -> Session:
    for d in ("home", "project", "audit"):
        (root / d).mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "CLAUDE", "ANTHROPIC", "WAYS_"))
    }
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        NO_COLOR="1",
    )
    s = Session(root, env, root / "truth.jsonl", root / "audit")
    sensors = root / "config" / "agent-ways" / "sensors"
    sensors.mkdir(parents=True)
    (sensors / "e2e.yaml").write_text(
        "rules:\n  all:\n"
        f"    sections: [{SECTIONS}]\n"
        f"    dispatch: {{file: {{path: '{s.audit_dir}/{{session_id}}.jsonl'}}}}\n"
        "    delivery: at_least_once\n    chain: true\n"
    )
    (root / "config" / "agent-ways" / "config.yaml").write_text(
        f"ways:\n  dispatch_idle_seconds: {idle:g}\n"
    )
    r = s.ways("reconcile")
    if r.returncode != 0:
        raise RuntimeError(f"ways reconcile failed: {r.stderr}")
    add_handlers(s, [f'{sys.executable} -c "{RECORDER}" {s.truth_path}'])
    return s


API_KEY = "sk-ant-e2e"


def client_env(s: Session, url: str) -> dict[str, str]:
    """The client's environment: our Messages API, no traffic elsewhere, no retries of a
    failed request (the [apierr] turn fails at once)."""
    return dict(
        s.env,
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY=API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES="0",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        TERM="xterm-256color",
    )


def run(
    s: Session,
    prompts: list[str] = PROMPTS,
    timeout: float = 180,
    env_extra: dict | None = None,
    args: tuple[str, ...] = (),
) -> Session:
    """The prompts, each a `claude -p` run of one session; `env_extra` sets (a value of
    None: removes) variables of the client's environment; `args` go on each command line."""
    exe = claude_bin()
    server, url = messages_api.serve()
    env = client_env(s, url)
    for key, value in (env_extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    try:
        for prompt in prompts:
            cmd = [exe, "-p", prompt, "--output-format", "json", *args]
            cmd += ["--allowedTools", "Bash", "Agent"]
            if s.session_id:
                cmd += ["--resume", s.session_id]
            r = subprocess.run(
                cmd, cwd=s.project, env=env, capture_output=True, text=True, timeout=timeout
            )
            try:
                result = json.loads(r.stdout)
            except ValueError:
                raise RuntimeError(
                    f"claude gave no JSON (exit {r.returncode}): {r.stderr[-2000:]}"
                ) from None
            s.results.append(result)
            s.session_id = result.get("session_id", s.session_id)
    finally:
        server.shutdown()
        server.server_close()
    wait_for_dispatchers(s)
    return s


def wait_for_dispatchers(s: Session, timeout: float = 60) -> None:
    """Until no session folder is left (each -p turn ends with SessionEnd: drained)."""
    sessions = s.root / "state" / "agent-ways" / "sessions"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not sessions.exists() or not any(sessions.iterdir()):
            return
        time.sleep(0.2)


def in_etc_overlay(root: Path, module: str, mode: str) -> Path:
    """`python -m tests.e2e.<module> <root>/run <mode>` in a mount namespace of its own,
    with /etc overlaid (a managed install writes there as root, and the machine's /etc
    stays as it was); returns the overlay's upper folder: what the session wrote to
    /etc. The client is installed before, outside the namespace."""
    upper, work = root / "etc-upper", root / "etc-work"
    upper.mkdir(parents=True)
    work.mkdir()
    script = (
        f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"
        f" && exec {sys.executable} -m tests.e2e.{module} {root / 'run'} {mode}"
    )
    r = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return upper
