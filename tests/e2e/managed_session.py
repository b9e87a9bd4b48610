"""One real Claude Code session under `allowManagedHooksOnly`, run inside a private
mount namespace whose /etc is an overlay (tests/e2e/test_managed.py starts it), so
`ways reconcile --managed` writes the real /etc/claude-code without touching the
machine's.

    python -m tests.e2e.managed_session ROOT managed|user

`managed`: `ways reconcile --managed --agent all`; `user`: only the user-level
`ways reconcile`. Either way a raw recorder is wired as a managed drop-in (the ground
truth, which the policy lets run), and `ways status --json` is kept in ROOT/status.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ways_sensors.agents.claude_code.wiring import EVENTS, TOOL_EVENTS

from . import harness

PROMPTS = ["first [secret] push it", "[par] two things", "plain"]


def main(root: Path, mode: str) -> None:
    etc = Path("/etc/claude-code")
    (etc / "managed-settings.d").mkdir(parents=True, exist_ok=True)
    (etc / "managed-settings.json").write_text('{"allowManagedHooksOnly": true}\n')
    s = harness.prepare(root)  # user-level reconcile and a user-level recorder
    if mode == "managed":
        r = s.ways("reconcile", "--managed", "--agent", "all")
        if r.returncode != 0:
            raise SystemExit(f"reconcile --managed failed: {r.stderr}")
    recorder = f'{sys.executable} -c "{harness.RECORDER}" {s.truth_path}.managed'
    handler = {"type": "command", "timeout": 15, "command": recorder}
    hooks = {}
    for event in EVENTS:
        group = {"matcher": "*"} if event in TOOL_EVENTS else {}
        hooks[event] = [{**group, "hooks": [handler]}]
    (etc / "managed-settings.d" / "10-truth.json").write_text(json.dumps({"hooks": hooks}))
    harness.run(s, PROMPTS)
    (root / "session.json").write_text(json.dumps({"session_id": s.session_id}))
    (root / "status.json").write_text(s.ways("status", "--json").stdout)
    (root / "status.code").write_text(str(s.ways("status").returncode))
    audit = s.audit_dir / f"{s.session_id}.jsonl"
    if audit.exists():
        r = s.ways("sensors", "verify", str(audit), "--rule", "e2e/all")
        (root / "verify.json").write_text(json.dumps([r.returncode, r.stdout + r.stderr]))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
