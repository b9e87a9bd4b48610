"""The real Claude Code client, interactive, in a pseudo-terminal: typed prompts, answered
permission prompts, `/clear`, and a SIGKILL, as a person's session would have them.

The screen is not parsed beyond waiting for a few words; what happened is judged from
the hooks' ground truth and the transcript, never from the rendering.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def trust(home: Path, project: Path, api_key: str) -> None:
    """What a person clicked through once: onboarding, the folder's trust, the API key."""
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
                "projects": {str(project): {"hasTrustDialogAccepted": True, "allowedTools": []}},
            }
        )
    )


class Terminal:
    """One client process on a pty (120x40), its output read continuously."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the client
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.screen = b""

    def pump(self, seconds: float = 0.2) -> None:
        end = time.monotonic() + seconds
        while True:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                return
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            self.screen = (self.screen + data)[-200_000:]
            if b"\x1b[6n" in data:  # a cursor position query: answer like a terminal
                os.write(self.fd, b"\x1b[1;1R")

    def text(self) -> str:
        return _ANSI.sub(b"", self.screen).decode("utf-8", "replace")

    def wait_for(self, pattern: str, timeout: float = 90) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump(0.3)
            if re.search(pattern, self.text()):
                return True
        return False

    def wait_until(self, check, timeout: float = 90) -> bool:
        """Keep reading the screen until `check()` holds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump(0.3)
            if check():
                return True
        return False

    def type(self, text: str) -> None:
        """Type a line and press Enter, as a person would (a pause before Enter, so
        the input box takes the text as typed, not as a paste)."""
        self.screen = b""
        os.write(self.fd, text.encode())
        self.pump(0.6)
        os.write(self.fd, b"\r")
        self.pump(0.3)

    def press_enter(self) -> None:
        os.write(self.fd, b"\r")
        self.pump(0.3)

    def kill(self) -> None:
        """SIGKILL, and reap it (a zombie would still look alive to `kill -0`)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass
