"""Claude Code's own measure of our hook: the durations it records in the transcript.

Runs the real client (pinned, tests/e2e/harness.py) through the scripted six-turn session
and reads the `hook_success` attachments, which carry `durationMs`. Claude Code 2.1.332
records a successful hook run only when it printed something, and ours never prints, so
this bench wires two probes beside the real wiring, on the same ten events:

    ( <the command `ways reconcile` wrote> ); echo ways-probe
    ( true ); echo true-probe

Both pay the same subshell and echo, so their difference is our hook's cost as Claude
Code sees it. Reports median and maximum per probe over every recorded run.
Usage: python bench/claude_hook_durations.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.e2e import harness


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        s = harness.prepare(Path(tmp))
        settings = json.loads((s.home / ".claude" / "settings.json").read_text())
        ours = settings["hooks"]["PreToolUse"][-2]["hooks"][0]["command"]
        assert ours.endswith("hook sensors")
        harness.add_handlers(s, [f"( {ours} ); echo ways-probe", "( true ); echo true-probe"])
        harness.run(s)
        rows = []
        for path in (s.home / ".claude" / "projects").rglob("*.jsonl"):
            for line in path.read_text().splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                att = obj.get("attachment") if obj.get("type") == "attachment" else None
                if isinstance(att, dict) and att.get("type") == "hook_success":
                    rows.append(
                        (str(att.get("command")), att.get("hookEvent"), att.get("durationMs"))
                    )
    print(f"hook durations recorded by Claude Code {harness.VERSION} over one six-turn session")
    print()
    print("| hook | runs | median ms | max ms |")
    print("|---|---:|---:|---:|")
    medians = {}
    for label, probe in (
        ("ways hook sensors (as wired) + probe", "ways-probe"),
        ("true + probe", "true-probe"),
    ):
        ms = [d for c, _, d in rows if c.endswith(probe) and isinstance(d, (int, float))]
        if not ms:
            print(f"| {label} | 0 | - | - |")
            continue
        medians[probe] = statistics.median(ms)
        print(f"| {label} | {len(ms)} | {statistics.median(ms):.0f} | {max(ms):.0f} |")
    if len(medians) == 2:
        print()
        print(f"- median difference: {medians['ways-probe'] - medians['true-probe']:+.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
