"""`ways sensors tap` of a disabled rule says so at once on stderr, instead of waiting in
silence for records the rule will never deliver."""

from __future__ import annotations

import signal

from ..helpers import spawn


def test_tap_of_a_disabled_rule_says_it_is_disabled(install, tmp_path):
    install.sensor(
        "team",
        f"rules:\n  calls:\n    enabled: false\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/out.jsonl'}}}}\n",
    )
    tap = spawn(install, "sensors", "tap", "team/calls")
    try:
        assert tap.stderr is not None
        first = tap.stderr.readline()
        assert first.startswith("team/calls is disabled: nothing to tap until it is enabled")
        assert "ways settings set ways.sensors.team.rules.calls.enabled true" in first
        assert "tapping team/calls" in tap.stderr.readline()
    finally:
        tap.send_signal(signal.SIGINT)
        tap.communicate(timeout=30)  # reads and closes its pipes
    assert tap.returncode == 0
