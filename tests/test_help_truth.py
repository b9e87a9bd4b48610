"""What `--help` says is so: every agent named where an agent is chosen, the exit codes
each command can return, the sensors tab's keys (#36, the smaller untruths)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ways_sensors import agents

WAYS = str(Path(sys.executable).parent / "ways")


def helped(*words: str) -> str:
    r = subprocess.run([WAYS, *words, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return " ".join((r.stdout + r.stderr).split())  # argparse wraps: compare unwrapped


def test_every_agent_is_named_where_one_is_chosen():
    for words in [(), ("reconcile",), ("hook", "sensors")]:
        text = helped(*words)
        assert "Claude Code only" not in text
        for name in agents.names():
            assert name in text or name.replace("-", " ") in text.lower(), (words, name)


def test_exit_codes_say_what_each_command_returns():
    assert "2 bad arguments, or no such rule; 3 broken" in helped("sensors", "verify")
    rec = helped("reconcile")
    assert "no such agent" in rec and "sensor or rule" not in rec
    assert "8 dead letters wait" in helped("status")
    assert "7 one was not accepted" in helped("deadletters", "replay")


def test_the_tabs_help_lists_its_keys():
    text = helped("sensors", "tui")
    for key in ("space", "enter", "preview", "fire", "filter", "quit"):
        assert key in text, key


def test_explain_names_its_numbering_as_the_replays():
    assert "counted from 1 as `ways sensors test` numbers them" in helped("sensors", "explain")


def test_explain_of_a_recorded_event_says_which_numbering_it_counts_in(install):
    from .conftest import TRANSCRIPT

    r = install.ways("sensors", "explain", "--transcript", str(TRANSCRIPT), "--event", "2")
    assert r.returncode == 0, r.stderr
    assert ", record 2 of the replayed session" in r.stdout.splitlines()[0]
