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
