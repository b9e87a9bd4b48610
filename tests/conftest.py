"""Shared fixtures: a throwaway install (HOME and every XDG root in tmp), the real
`ways` command and hook as subprocesses, and a reaper for what tests spawn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from ways_sensors.config.spec import SECTIONS
from ways_sensors.state.files import replace_atomically

from .e2e.harness import VERSION

# pytest keeps each test module's assertion rewrite as a .pyc in __pycache__ (ignored
# by git), unless bytecode writing is off: with PYTHONDONTWRITEBYTECODE set, as some
# images do, every test process of every run parsed and rewrote all the test modules
# again (about 4 s of CPU per process, three of them in the fast lane). The test
# processes write their caches; the environment handed to `ways` is left as it is.
sys.dont_write_bytecode = False

REPO = Path(__file__).resolve().parent.parent
# Recorded from the real client by scripts/record_fixtures.py (see its README.md)
FIXTURES = Path(__file__).resolve().parent / "fixtures" / f"claude-code-{VERSION}"
PAYLOADS = FIXTURES / "payloads"  # one real payload per wired event and variant
HOOKS = FIXTURES / "hooks.jsonl"  # every payload of the recorded session, in order
TRANSCRIPT = next((FIXTURES / "transcript").glob("*.jsonl"))  # that session's transcript
LAUNCHER = REPO / "ways_sensors" / "_launch.py"
ALL_SECTIONS = list(SECTIONS)  # every section the spec knows: a new one is tested at once


def saved(path: Path, text: str) -> Path:
    """`text` written to `path` whole, as an editor saves (a new file renamed over the
    old; a new one readable by all, as under umask 022): a dispatcher or hook reading
    the file mid-write would see half of it, refuse it and log the refusal, which is
    right for such a file and not what a test edits."""
    replace_atomically(str(path), text, new_mode=0o644)
    return path


class Install:
    """A throwaway install: its own HOME, XDG roots and project folder."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.project = root / "proj"
        for p in (self.home, self.project):
            p.mkdir(parents=True, exist_ok=True)
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CLAUDE_", "WAYS_"))
        }
        self.env.update(
            {
                "HOME": str(self.home),
                "XDG_CONFIG_HOME": str(root / "config"),
                "XDG_CACHE_HOME": str(root / "cache"),
                "XDG_STATE_HOME": str(root / "state"),
                "CLAUDE_PROJECT_DIR": str(self.project),
                "NO_COLOR": "1",
            }
        )

    @property
    def config_root(self) -> Path:
        return self.root / "config" / "agent-ways"

    @property
    def state_root(self) -> Path:
        return self.root / "state" / "agent-ways"

    @property
    def layout(self):
        """The install's state root as the code sees it: in-process state access with
        no change to os.environ."""
        from ways_sensors.state.layout import Layout

        return Layout(str(self.state_root))

    @property
    def user_sensors(self) -> Path:
        return self.config_root / "sensors"

    @property
    def project_sensors(self) -> Path:
        return self.project / ".claude" / "ways-sensors"

    def sensor(self, name: str, text: str, layer: str = "user") -> Path:
        folder = self.user_sensors if layer == "user" else self.project_sensors
        folder.mkdir(parents=True, exist_ok=True)
        return saved(folder / f"{name}.yaml", textwrap.dedent(text))

    def config(self, text: str) -> Path:
        self.config_root.mkdir(parents=True, exist_ok=True)
        return saved(self.config_root / "config.yaml", textwrap.dedent(text))

    def ways(
        self,
        *args: str,
        input: bytes | str | None = None,
        timeout: float = 60,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess:
        """The real `ways` console script of this environment."""
        exe = Path(sys.executable).parent / "ways"
        return subprocess.run(
            [str(exe), *args],
            env=self.env,
            input=input,
            capture_output=True,
            timeout=timeout,
            cwd=cwd or self.project,
            text=not isinstance(input, bytes),
        )

    def python(self, code: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """`python -c code` in this install's environment and project folder (what a
        command loads, without the console script), its output as text."""
        return subprocess.run(
            [sys.executable, "-c", code],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def hook(
        self, payload: bytes | str | dict, *, wired: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        """Run the hook exactly as reconcile wires it (sh -c, -S, the launcher)."""
        if isinstance(payload, dict):
            payload = json.dumps(payload)
        if isinstance(payload, str):
            payload = payload.encode()
        if wired:
            from ways_sensors.commands.reconcile import hook_command

            argv = ["sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
        else:
            argv = [str(Path(sys.executable).parent / "ways"), "hook", "sensors"]
        return subprocess.run(
            argv,
            env=self.env,
            input=payload,
            capture_output=True,
            timeout=timeout,
            cwd=self.project,
        )

    def sessions(self) -> Path:
        return self.state_root / "sessions"


@pytest.fixture
def install(tmp_path: Path):
    yield Install(tmp_path)
    kill_dispatchers(tmp_path)


def everything_sensor(out: Path, **rule_fields) -> str:
    extra = "".join(f"    {k}: {v}\n" for k, v in rule_fields.items())
    return (
        "rules:\n"
        "  everything:\n"
        f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n" + extra
    )


def payload(name: str) -> dict:
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def hooks() -> list[dict]:
    """Every payload the recorded session sent, in order."""
    return [json.loads(line) for line in HOOKS.read_text().splitlines() if line.strip()]


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, from the kernel's own lists of each thread's children
    (/proc/PID/task/TID/children): the reaper runs around every test, and psutil finds
    children by reading every process's stat file. psutil where the kernel has no list."""
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue  # gone
        for tid in threads:
            try:
                with open(f"/proc/{parent}/task/{tid}/children", "rb") as f:
                    kids = {int(x) for x in f.read().split()} - found
            except (OSError, ValueError):
                continue
            found |= kids
            todo += kids
    return found


@pytest.fixture(autouse=True)
def reap_children():
    """Kill what a test left running (dispatchers, consumers), grandchildren included."""
    before = descendants(os.getpid())
    yield
    for pid in descendants(os.getpid()) - before:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def kill_dispatchers(root: Path) -> None:
    """Detached dispatchers are not our children: find them by their state root. Only a
    dispatcher's environment is read, and /proc is read directly (this teardown runs
    after every test with an install, over every process of the machine)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"dispatch" not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = dict(v.partition(b"=")[::2] for v in f.read().split(b"\0"))
        except OSError:
            continue  # gone, or not ours to read
        if str(root).encode() in env.get(b"XDG_STATE_HOME", b""):
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
