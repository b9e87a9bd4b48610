"""Help that teaches: every option of every command has text, every command ends its help
with an example and its exit codes, and the hook's usage goes to stderr, never stdout."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from ways_sensors.commands.help import OPTION_HELP, commands
from ways_sensors.commands.parser import build_parser

WAYS = str(Path(sys.executable).parent / "ways")
TREE = commands(build_parser())


def test_every_option_of_every_command_has_help_text():
    missing = []
    for words, sub in TREE:
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append((" ".join(words), action.option_strings or action.dest))
    assert not missing


def test_the_same_option_is_worded_the_same_everywhere():
    for words, sub in TREE:
        for action in sub._actions:
            if "--json" in action.option_strings:
                assert action.help == OPTION_HELP["--json"], words


@pytest.mark.parametrize("words", [w for w, _ in TREE if w != ("hook",)], ids=" ".join)
def test_each_command_help_ends_with_an_example_and_exit_codes(words):
    r = subprocess.run([WAYS, *words, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tail = r.stdout.rstrip().split("\n\n")
    assert tail[-2].startswith("example:\n  ") and "ways " in tail[-2], r.stdout
    assert tail[-1].startswith("exit codes: "), r.stdout


def test_hook_help_goes_to_stderr_never_stdout():
    r = subprocess.run(
        [WAYS, "hook", "sensors", "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0
    assert r.stdout == ""
    assert "usage: ways hook sensors" in r.stderr
    assert "example:" in r.stderr and "exit codes:" in r.stderr
