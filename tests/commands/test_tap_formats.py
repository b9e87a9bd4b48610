"""`ways sensors tap` shows what the consumer gets: a rule whose target has a `format`
is tapped as that format's documents, the very lines its consumer received (#36: a
splunk_hec rule's tap showed the plain record)."""

from __future__ import annotations

import json
import signal
import threading

from ..conftest import payload
from ..helpers import spawn, wait_until


def test_tap_of_a_formatted_target_shows_the_consumers_documents(install, tmp_path):
    out = tmp_path / "out.ndjson"
    install.sensor(
        "team",
        f"rules:\n  calls:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{out}', format: ecs}}}}\n",
    )
    tap = spawn(install, "sensors", "tap", "team/calls")
    lines: list[str] = []
    assert tap.stdout is not None and tap.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(tap.stdout.readline, "")))
    try:
        assert "tapping team/calls" in tap.stderr.readline()
        reader.start()
        for p in (payload("SessionStart"), payload("PreToolUse")):
            assert install.hook(p).returncode == 0
        assert wait_until(lambda: out.exists() and out.read_text().count("\n") == 1)
        assert wait_until(lambda: len(lines) == 1)
    finally:
        tap.send_signal(signal.SIGINT)
        tap.communicate(timeout=30)
        reader.join(timeout=10)
    assert tap.returncode == 0
    assert [x.rstrip("\n") for x in lines] == out.read_text().splitlines()
    doc = json.loads(lines[0])
    assert "ecs" in doc and doc["ways"]["rule"] == "calls"  # an ECS document, not the record
