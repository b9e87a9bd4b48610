"""Driving the real Gemini CLI and the real Codex CLI through scripted sessions wired by
`ways reconcile --agent ...`, like harness.py does for Claude Code.

Each client comes from the npm registry at a pinned version, installed once into
`<repo>/.e2e/<name>` (or $WAYS_GEMINI_DIR / $WAYS_CODEX_DIR; $GEMINI_BIN / $CODEX_BIN
name an existing one). Each session runs in a throwaway HOME whose hooks file was
written by `ways reconcile --agent gemini|codex`, with one more handler on every event:
agents_recorder.py, which records what the client sent (the ground truth) and the
session file's size then. The model is ours, on loopback (gemini_api.py, codex_api.py):
nothing but the npm registry is contacted, and only for the install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import codex_api, gemini_api

REPO = Path(__file__).resolve().parent.parent.parent
RECORDER = Path(__file__).with_name("agents_recorder.py")
GEMINI_VERSION = "0.61.0"
CODEX_VERSION = "0.169.0"
PROMPTS = ["first [secret] push it", "[par] two things", "[fail] break it", "[plain] just talk"]
SECTIONS = (
    "user_prompt, queued_message, assistant_response, tool_call, tool_result, subagent,"
    " compaction, session_start, session_end"
)
GEMINI_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
    "Notification",
)
CODEX_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)


def npm_client(package: str, version: str, folder: Path, exe_name: str) -> str:
    """The pinned client's executable, installed with npm on first use (Node.js 20+).

    Install scripts are not run: neither client needs one (Codex's binary and Gemini
    CLI's native parts come as packages of the registry), and an older npm would let
    optional native modules fetch prebuilt binaries from elsewhere."""
    exe = folder / "node_modules" / ".bin" / exe_name
    if exe.exists():
        return str(exe)
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("the end-to-end suite needs Node.js 20+ and npm on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",  # nothing but the registry: no prebuilt-binary downloads
            "--prefix",
            str(folder),
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if r.returncode != 0 or not exe.exists():
        raise RuntimeError(f"npm could not install {package}@{version}: " + r.stderr[-1000:])
    return str(exe)


def gemini_bin() -> str:
    if os.environ.get("GEMINI_BIN"):
        return os.environ["GEMINI_BIN"]
    folder = Path(os.environ.get("WAYS_GEMINI_DIR", REPO / ".e2e" / "gemini-cli"))
    return npm_client("@google/gemini-cli", GEMINI_VERSION, folder, "gemini")


def codex_bin() -> str:
    if os.environ.get("CODEX_BIN"):
        return os.environ["CODEX_BIN"]
    folder = Path(os.environ.get("WAYS_CODEX_DIR", REPO / ".e2e" / "codex"))
    return npm_client("@openai/codex", CODEX_VERSION, folder, "codex")


@dataclass
class Session:
    agent: str
    root: Path
    env: dict[str, str]
    session_id: str | None = None
    results: list[dict] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def audit_dir(self) -> Path:
        return self.root / "audit"

    @property
    def truth_path(self) -> Path:
        return self.root / "truth.jsonl"

    def truth_lines(self) -> list[dict]:
        """The recorder's lines: {"payload", "size", "event"}."""
        out = []
        for line in self.truth_path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def truth(self) -> list[dict]:
        """What the client sent to its hooks, in order."""
        return [t["payload"] for t in self.truth_lines() if isinstance(t["payload"], dict)]

    def records(self, rule: str = "all") -> list[dict]:
        path = self.audit_dir / f"{rule}-{self.session_id}.jsonl"
        got = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        return [r for r in got if r.get("section") != "checkpoint"]  # signed, per batch

    def session_file(self) -> Path:
        """The chat file (Gemini CLI) or rollout (Codex) the hooks named. A Gemini CLI
        resume in a later minute names a second, short file at its SessionStart (a
        header and a `$set`) and the session's own file afterwards: the one most hooks
        named is the session's."""
        paths = Counter(t.get("transcript_path") for t in self.truth())
        paths.pop(None, None)
        paths.pop("", None)
        return Path(paths.most_common(1)[0][0])

    def ways(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(Path(sys.executable).parent / "ways"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            cwd=self.project,
            timeout=120,
        )


def _base_env(root: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "CLAUDE", "ANTHROPIC", "WAYS_", "GEMINI", "GOOGLE_"))
        and not k.startswith(("CODEX", "OPENAI"))
    }
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        NO_COLOR="1",
    )
    return env


def _sensors(s: Session) -> None:
    folder = s.root / "config" / "agent-ways" / "sensors"
    folder.mkdir(parents=True)
    (folder / "e2e.yaml").write_text(
        "rules:\n"
        "  all:\n"
        f"    sections: [{SECTIONS}]\n"
        f"    dispatch: {{file: {{path: '{s.audit_dir}/all-{{session_id}}.jsonl'}}}}\n"
        "    delivery: at_least_once\n    chain: true\n"
        "  shell:\n"
        "    sections: [tool_call]\n"
        "    where: {data.tool_kind: shell}\n"
        f"    dispatch: {{file: {{path: '{s.audit_dir}/shell-{{session_id}}.jsonl'}}}}\n"
        "    delivery: at_least_once\n"
    )
    (s.root / "config" / "agent-ways" / "config.yaml").write_text(
        "ways:\n  dispatch_idle_seconds: 5\n"
    )


def _recorder(s: Session, event: str) -> str:
    return f"{sys.executable} -S {RECORDER} {s.truth_path} {event}"


def prepare(root: Path, agent: str) -> Session:
    """A throwaway install with the agent's offline settings, wired by `ways reconcile
    --agent`, then the recorder added beside ours on every event."""
    for d in ("home", "project", "audit"):
        (root / d).mkdir(parents=True, exist_ok=True)
    s = Session(agent, root, _base_env(root))
    _sensors(s)
    if agent == "gemini":
        path = s.home / ".gemini" / "settings.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(gemini_settings(), indent=2))
    else:
        s.env["CODEX_HOME"] = str(s.home / ".codex")
        (s.home / ".codex").mkdir(parents=True)
        path = s.home / ".codex" / "hooks.json"
    r = s.ways("reconcile", "--agent", agent)
    if r.returncode != 0:
        raise RuntimeError(f"ways reconcile --agent {agent} failed: {r.stderr}")
    settings = json.loads(path.read_text())
    for event in GEMINI_EVENTS if agent == "gemini" else CODEX_EVENTS:
        handler = {"type": "command", "command": _recorder(s, event)}
        if agent == "gemini":
            handler = {"name": f"record-{event}", **handler, "timeout": 10000}
            group = {"matcher": "*", "hooks": [handler]}
        else:
            group = {"hooks": [{**handler, "timeout": 10}]}
        settings["hooks"].setdefault(event, []).append(group)
    path.write_text(json.dumps(settings, indent=2))
    return s


def gemini_settings() -> dict:
    """What makes Gemini CLI run offline against our model, and compress its chat at
    the first chance (a tiny compression threshold)."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"compressionThreshold": 0.000001},
    }


def codex_config(url: str, agents: bool = False) -> str:
    """`agents`: Codex's subagent tools too (spawn_agent, wait_agent: `multi_agent`)."""
    return (
        'model = "mock-model"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n\n'
        "[model_providers.mock]\n"
        f'name = "Mock"\nbase_url = "{url}"\nenv_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n'
        "[analytics]\nenabled = false\n" + ("\n[features]\nmulti_agent = true\n" if agents else "")
    )


def run_gemini(s: Session, prompts: list[str] = PROMPTS, timeout: float = 180) -> Session:
    exe = gemini_bin()
    server, _, url = gemini_api.serve()
    env = dict(
        s.env,
        GEMINI_API_KEY="e2e-gemini-key",
        GOOGLE_GEMINI_BASE_URL=url,
        GEMINI_CLI_TRUST_WORKSPACE="true",
        GEMINI_TELEMETRY_ENABLED="false",
    )
    try:
        for prompt in prompts:
            cmd = [exe, "-p", prompt, "--approval-mode", "yolo", "--output-format", "json"]
            if s.session_id:
                cmd += ["--resume", s.session_id]
            r = subprocess.run(
                cmd,
                cwd=s.project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            try:
                result = json.loads(r.stdout)
            except ValueError:
                raise RuntimeError(
                    f"gemini gave no JSON (exit {r.returncode}): {r.stderr[-2000:]}"
                ) from None
            s.results.append({**result, "_rc": r.returncode, "_stderr": r.stderr[-2000:]})
            s.session_id = result.get("session_id", s.session_id)
    finally:
        server.shutdown()
        server.server_close()
    wait_for_dispatchers(s)
    return s


def run_codex(
    s: Session,
    prompts: list[str] = PROMPTS,
    timeout: float = 180,
    agents: bool = False,
    trust_every_hook: bool = True,
) -> Session:
    """`trust_every_hook`: --dangerously-bypass-hook-trust (else a hook that is not
    managed runs only once trusted in /hooks: never, here)."""
    exe = codex_bin()
    server, url = codex_api.serve()
    (s.home / ".codex" / "config.toml").write_text(codex_config(url, agents))
    env = dict(s.env, MOCK_API_KEY="e2e-codex-key")
    flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
    flags += ["--dangerously-bypass-hook-trust"] if trust_every_hook else []
    try:
        for prompt in prompts:
            cmd = [exe, "exec", *(["resume", s.session_id] if s.session_id else []), *flags, prompt]
            r = subprocess.run(
                cmd,
                cwd=s.project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            events = []
            for line in r.stdout.splitlines():
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
            if r.returncode != 0:
                raise RuntimeError(f"codex exec failed (exit {r.returncode}): {r.stderr[-2000:]}")
            started = next(
                (e.get("thread_id") for e in events if e.get("type") == "thread.started"), None
            )
            s.session_id = s.session_id or started
            s.results.append({"events": events, "_rc": r.returncode, "_stderr": r.stderr[-2000:]})
    finally:
        server.shutdown()
        server.server_close()
    wait_for_dispatchers(s)
    return s


def compressions(truth: list[dict]) -> list[int]:
    """The PreCompress events (their indexes in `truth`) after which Gemini CLI did
    compress its chat: the next BeforeModel's request holds a summary (our model's
    `<state_snapshot>SUMMARY <n>`) that the one before did not."""
    out, pending, seen = [], None, set()
    for i, t in enumerate(truth):
        event = t.get("hook_event_name")
        if event == "PreCompress":
            pending = i
        elif event == "BeforeModel":
            found = set(re.findall(r"SUMMARY (\d+)", json.dumps(t.get("llm_request"))))
            if pending is not None and found - seen:
                out.append(pending)
            pending, seen = None, found
        elif event == "SessionStart":
            seen = set()
    return out


def wait_for_dispatchers(s: Session, timeout: float = 60) -> None:
    """Until no session folder is left (each process of a session ends with SessionEnd)."""
    sessions = s.root / "state" / "agent-ways" / "sessions"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not sessions.exists() or not any(sessions.iterdir()):
            return
        time.sleep(0.2)
