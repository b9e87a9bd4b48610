"""Control characters from sensor files never reach the terminal (issue 22, defect 11),
through the real `ways` commands: a cloned repository's sensor file whose name and
fields hold escape sequences (an OSC 2 pane title, a screen clear, an OSC 52 clipboard
write, a C1 CSI) is listed, linted and shown by `settings list` with each control
character spelled `\\u00XX`, allowed or not."""

from __future__ import annotations

import json

import pytest

ESC = "\x1b"
OSC_TITLE = ESC + "]2;pwned-title" + "\x07"
CLEAR = ESC + "[2J" + ESC + "[H"
CLIPBOARD = ESC + "]52;c;cm0gLXJmIH4=" + "\x07"
C1 = "\x9b" + "31m"
RAW = (ESC, "\x07", "\x9b")


def hostile(install, layer: str) -> None:
    text = (
        f'description: "{OSC_TITLE}{CLEAR}{CLIPBOARD}{C1}"\n'.replace("\x1b", "\\e")
        .replace("\x07", "\\a")
        .replace("\x9b", "\\x9b")
        + "rules:\n  r:\n    sections: [tool_call]\n"
        + '    dispatch: {command: {argv: ["logger", "\\e]52;c;eA==\\a"]}}\n'
    )
    install.sensor("evil", text, layer=layer)
    folder = install.user_sensors if layer == "user" else install.project_sensors
    (folder / f"bad{OSC_TITLE}.yaml").write_text("rules: {}\n")  # an invalid name


def assert_escaped(r) -> None:
    for stream in (r.stdout, r.stderr):
        text = stream if isinstance(stream, str) else stream.decode()
        for raw in RAW:
            assert raw not in text, (raw, text[:400])


@pytest.mark.parametrize("layer", ["user", "project"])
def test_list_lint_and_settings_show_control_characters_as_text(install, layer):
    hostile(install, layer)  # the project layer is not allowed: it still shows up
    outputs = []
    for args in (
        ("sensors", "list"),
        ("sensors", "list", "--json"),
        ("sensors", "lint"),
        ("sensors", "lint", "--json"),
        ("settings", "list"),
        ("status",),
    ):
        r = install.ways(*args)
        assert_escaped(r)
        outputs.append(r.stdout + r.stderr)
    both = "".join(outputs)
    assert "\\u001b]2;pwned-title\\u0007" in both  # shown, as text
    if layer == "user":
        listed = json.loads(install.ways("sensors", "list", "--json").stdout)
        [evil] = [s for s in listed["sensors"] if s["name"] == "evil"]
        assert evil["description"].startswith(OSC_TITLE)  # --json keeps the value exact


def test_colour_codes_from_content_are_text_too_in_lint_and_tap_pretty(install, tmp_path):
    """Only `paint`'s own colour codes pass: a colour code in a rule's name (lint) or in
    a record (`tap --pretty`) reached the terminal as colour. The tap is a real
    `ways sensors tap` process, the records come through the real dispatcher."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from .conftest import payload
    from .evidence.runs import audited, dispatch
    from .helpers import spool_directly

    install.sensor("x", 'rules:\n  "\\e[31mr":\n    sections: [tool_call]\n')
    r = install.ways("sensors", "lint")
    assert_escaped(r)
    assert "\\u001b[31mr" in r.stdout
    install.sensor("x", "enabled: false\nrules: {}\n")

    out = tmp_path / "audit.jsonl"
    audited(install, out)
    ways = str(Path(sys.executable).parent / "ways")
    tap = subprocess.Popen(
        [ways, "sensors", "tap", "audit", "--pretty"], env=install.env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        taps = install.state_root / "taps"
        end = time.monotonic() + 30
        while not list(taps.glob("*.tap")) and time.monotonic() < end:
            time.sleep(0.05)
        prompt = payload("UserPromptSubmit")
        prompt["prompt"] = f"{ESC}[31mred {OSC_TITLE}{CLEAR}"
        spool_directly(install, [("SessionStart", payload("SessionStart"))])
        spool_directly(install, [("UserPromptSubmit", prompt)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        time.sleep(1.0)  # the tap reads every POLL
    finally:
        tap.send_signal(signal.SIGINT)
        shown, err = tap.communicate(timeout=30)
    assert_escaped(subprocess.CompletedProcess([], 0, shown, err))
    assert b"\\u001b[31mred" in shown and b"\\u001b]2;pwned-title" in shown
