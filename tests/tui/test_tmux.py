"""`ways sensors tui` under tmux, a real terminal emulator: what is on screen, as text.

tmux draws the tab in a pane of a fixed size and `capture-pane` gives the screen as a
person sees it (no colour: `-p` without `-e`), so these assert on the screen itself:
the rule's name still there after scrolling right, MODE and DELIVERY on screen at 160
columns without scrolling. scripts/test.sh installs tmux on Debian when it is missing.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from .conftest import HAND_WRITTEN

WAYS = str(Path(sys.executable).parent / "ways")


class Tmux:
    def __init__(self, env: dict[str, str], cwd: Path, size: tuple[int, int]):
        assert shutil.which("tmux"), "tmux is needed: scripts/test.sh installs it on Debian"
        self.name = f"ways-{uuid.uuid4().hex[:8]}"
        self.sock = str(cwd / "tmux.sock")  # a server of our own, never the user's
        # without COLUMNS and LINES, from this process or from the pane's shell at tmux's
        # first 80x24 (Textual reads them before the pty): the tab takes the pane's size
        unsized = {k: v for k, v in env.items() if k not in ("TMUX", "COLUMNS", "LINES")}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in unsized.items())
        cmd = f"env -u COLUMNS -u LINES {exports} TERM=xterm-256color {WAYS} sensors tui"
        self.tmux(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(size[0]),
            "-y",
            str(size[1]),
            "-c",
            str(cwd),
            cmd,
        )

    def tmux(self, *args: str) -> str:
        r = subprocess.run(
            ["tmux", "-S", self.sock, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never on screen:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True, timeout=30)


def _header(screen: str) -> str:
    return next(line for line in screen.splitlines() if "SENSOR / RULE" in line)


def test_name_column_stays_after_scrolling_right_at_80_columns(install):
    install.sensor("team", HAND_WRITTEN)
    t = Tmux(install.env, install.project, (80, 30))
    try:
        t.wait_for("live dispatchers")
        t.keys("/")
        t.wait_for("filter: rows narrow")
        t.keys("calls")
        t.wait_for("├ calls")
        t.keys("Enter")  # the filter ends; the table has the keys
        time.sleep(0.5)
        first = _header(t.screen())
        t.keys(*["Right"] * 54)  # past STATE, HEALTH and MODE
        screen = t.wait_for("OFF-MACHIN")  # scrolled right
        header = _header(screen)
        assert header != first and "STATE" not in header, header
        row = next(ln for ln in screen.splitlines() if "├ calls" in ln)
        assert row.strip().startswith("├ calls"), screen  # the pinned name column
        t.keys("q")
    finally:
        t.close()


def test_mode_and_delivery_on_screen_at_160_columns(install):
    install.sensor("team", HAND_WRITTEN)
    t = Tmux(install.env, install.project, (160, 40))
    try:
        t.wait_for("live dispatchers")
        # a loaded machine may start the tab before its pane is 160 wide, and a resize
        # can land before the tab listens for it (a first frame at 80 columns, kept):
        # the window is resized again until the tab has followed, as a person would
        screen = t.screen()
        for _ in range(10):
            if "OFF-MACHINE" in screen:
                break
            for width in ("159", "160"):
                t.tmux("resize-window", "-t", t.name, "-x", width, "-y", "40")
            try:
                screen = t.wait_for("OFF-MACHINE", timeout=3)
            except AssertionError:
                screen = t.screen()
        pane = t.tmux("display-message", "-p", "-t", t.name, "#{pane_width}x#{pane_height}")
        assert "OFF-MACHINE" in screen, f"pane {pane.strip()}:\n{screen}"
        header = _header(screen)
        for heading in ("STATE", "HEALTH", "MODE", "DELIVERY", "TIMEOUT", "TARGET", "OFF-MACHINE"):
            assert heading in header, header
        # NO_COLOR (the install's env) and no colour captured: states read as words
        named = (re.match(r"^\s*[├└] (\S+) ", ln) for ln in screen.splitlines())
        rows = {m.group(1): m.string for m in named if m}
        assert "off (sensor)" in rows["all"] and "at_least_once" in rows["all"], screen
        assert " on " in rows["calls"] and "best_effort" in rows["calls"], screen
        t.keys("q")
    finally:
        t.close()


def test_escape_sequences_in_sensor_files_never_drive_the_terminal(install):
    """A sensor file's title-setting and screen-clearing sequences (its description, a
    rule's command, an `allow`ed project's files alike) are drawn as text: the pane keeps
    its title and the table stays on screen."""
    esc, bel = "\\e", "\\a"
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")  # allowed
    install.sensor(
        "evil",
        f'description: "{esc}]2;PWNED-TITLE{bel}{esc}[2J{esc}[H"\n'
        "rules:\n  calls:\n    sections: [tool_call]\n"
        f'    dispatch: {{command: {{argv: ["logger", "{esc}]2;PWNED-TITLE{bel}{esc}[2J"]}}}}\n',
        layer="project",
    )
    hostile = "\x1b]2;PWNED-TITLE\x07\x1b[2J\x1b[H"  # in a file's name: events.log, the tab
    (install.project_sensors / f"bad{hostile}.yaml").write_text("rules: {}\n")
    t = Tmux(install.env, install.project, (160, 40))
    try:
        t.wait_for("└ calls")
        t.keys("Down")
        t.keys("Down")
        time.sleep(1.0)
        screen = t.screen()
        title = t.tmux("display-message", "-p", "-t", t.name, "#{pane_title}")
        assert "PWNED-TITLE" not in title, title
        assert "└ calls" in screen and "u001b" in screen, screen  # drawn, as text
        t.keys("q")
    finally:
        t.close()
