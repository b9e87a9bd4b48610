"""`ways sensors tui` as a real process in a pseudo-terminal: keys in, files changed.

And the boundary: Textual is imported by the tab alone, never by the hook or another
command; without it, the command says in one line how to install it and exits 2.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from ways_sensors import agents

from ..conftest import LAUNCHER
from .conftest import HAND_WRITTEN

WAYS = str(Path(sys.executable).parent / "ways")
SID2 = "5c1e7a2b-4444-4e8a-9b6c-0d2f1a3b4c5d"


class Terminal:
    """A process on the slave side of a pty, its screen output collected as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, size=(40, 160)):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(size[1]), "LINES": str(size[0])},
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed its side
                return
            if not chunk:
                return
            self.output += chunk

    def wait_for(self, text: bytes, since: int = 0, timeout: float = 30) -> bool:
        """True once `text` was drawn after output offset `since`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.output[since:]:
                return True
            time.sleep(0.05)
        return False

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        os.close(self.master)


def until(pred, timeout: float = 30) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_space_in_a_real_terminal_toggles_the_rule_and_keeps_its_comments(install):
    path = install.sensor("team", HAND_WRITTEN)
    before = path.read_text()
    term = Terminal([WAYS, "sensors", "tui"], install.env, install.project)
    try:
        assert term.wait_for(b"SENSOR / RULE"), bytes(term.output[-2000:])
        assert term.wait_for(b"live dispatchers: none")  # the footer: mounted and counted
        mark = len(term.output)
        term.type(b"/")
        assert term.wait_for(b"filter: rows narrow", since=mark)  # the filter box opened
        mark = len(term.output)
        term.type(b"calls.jsonl")
        assert term.wait_for(b"calls.jsonl", since=mark)
        term.type(b"\r")  # enter: the filter ends on its first match, the table has the keys
        time.sleep(0.5)
        term.type(b" ")
        assert until(lambda: path.read_text() != before), bytes(term.output[-2000:])
        term.type(b"q")
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()
    after = path.read_text()
    assert after == before.replace(
        "    timeout: 2s      # generous\n", "    timeout: 2s      # generous\n    enabled: false\n"
    ), after
    got = install.ways("settings", "get", "ways.sensors.team.rules.calls.enabled")
    assert got.stdout == "false\n"


def imported(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> set[str]:
    """The modules a real process imports, from `-X importtime` (on stderr)."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    names = set()
    for line in r.stderr.decode(errors="replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert (
        "ways_sensors" in names
        or "ways_sensors.hook" in names
        or any(n.startswith("ways_sensors") for n in names)
    ), r.stderr[-2000:]
    return names


def test_textual_is_imported_by_the_tab_alone(install, tmp_path):
    install.sensor(
        "live",
        "rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    payload = {
        **agents.adapter(agents.DEFAULT).example("tool_call"),
        "session_id": "5c1e7a2b-3333-4e8a-9b6c-0d2f1a3b4c5d",
    }
    runs = {
        "hook": imported(
            ["-S", str(LAUNCHER), "hook", "sensors"],
            install.env,
            install.project,
            json.dumps(payload).encode(),
        ),
        "list": imported([WAYS, "sensors", "list"], install.env, install.project),
        "status": imported([WAYS, "status"], install.env, install.project),
        "settings": imported([WAYS, "settings", "list"], install.env, install.project),
        "dispatcher": imported(
            [WAYS, "sensors", "dispatch", "--session", SID2, "--idle", "0.5"],
            install.env,
            install.project,
        ),
        "fire": imported(
            [WAYS, "sensors", "fire", "live/r", "--section", "tool_call"],
            install.env,
            install.project,
        ),
    }
    for name, modules in runs.items():
        assert not {m for m in modules if m.split(".")[0] == "textual"}, name
    # the hook's record is delivered (by its detached dispatcher): the path ran whole
    assert until(lambda: (tmp_path / "o").exists())
    # the tab itself does import it: the check above can see textual when it is there
    tab = imported(["-c", "import ways_sensors.tui.app"], install.env, install.project)
    assert "textual" in tab


def test_without_textual_the_tab_says_how_to_install_it_and_exits_2(install):
    hide = (
        "import sys; sys.modules['textual'] = None; "  # an import of it now fails
        "from ways_sensors.cli import main; sys.exit(main(['sensors', 'tui']))"
    )
    r = install.python(hide)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    assert "pip install 'ways-sensors[tui]'" in r.stderr
