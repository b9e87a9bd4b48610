"""Record the payloads the session issue's tests read, from a run of this suite.

    python -m tests.e2e.fixtures ROOT [ROOT ...]

ROOT is a session folder the e2e fixtures left (pytest --basetemp=DIR keeps them:
DIR/claude-life0, DIR/claude-e2e0). For each event below, the first payload the
recording hook saw is written to tests/fixtures/claude-code-2.1.332/<name>.json, and a
few transcript lines (prompts, API calls, permission decisions) to transcript-*.jsonl,
with the throwaway paths rewritten to
/home/dev/shop (so the files say where they came from without naming this machine).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code-2.1.332"
WANTED = {
    "PermissionRequest.json": ("PermissionRequest", {"permission_mode": "default"}),
    "Notification-permission_prompt.json": (
        "Notification",
        {"notification_type": "permission_prompt"},
    ),
    "StopFailure.json": ("StopFailure", {}),
    "PostCompact.json": ("PostCompact", {}),
    "SessionStart-clear.json": ("SessionStart", {"source": "clear"}),
    "SessionEnd-clear.json": ("SessionEnd", {"reason": "clear"}),
    "SessionStart-resume.json": ("SessionStart", {"source": "resume"}),
    "SubagentStop-internal.json": ("SubagentStop", {"agent_type": ""}),
    "SubagentStop.json": ("SubagentStop", {"agent_type": "general-purpose"}),
}


def rewrite(text: str, root: Path) -> str:
    home = str(root / "home")
    project = str(root / "project")
    encoded = "".join(c if c.isalnum() else "-" for c in project)
    text = text.replace(encoded, "-home-dev-shop").replace(project, "/home/dev/shop")
    text = text.replace(str(root / "outside"), "/home/dev/outside")
    return text.replace(home, "/home/dev")


def main(roots: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (event, fields) in WANTED.items():
        for root in map(Path, roots):
            truth = [json.loads(x) for x in (root / "truth.jsonl").read_text().splitlines()]
            found = [
                t
                for t in truth
                if t.get("hook_event_name") == event
                and all(t.get(k) == v for k, v in fields.items())
            ]
            if found:
                (OUT / name).write_text(rewrite(json.dumps(found[0]), root) + "\n")
                break
    for root in map(Path, roots):
        for path in (root / "home" / ".claude" / "projects").glob("*/*.jsonl"):
            lines = path.read_text().splitlines()
            keep = [x for x in lines if '"permissionDecision"' in x or _turn_line(x)]
            if any('"user_temporary"' in x for x in keep):
                name = "transcript-permission-answered.jsonl"
            elif any('"reject"' in x for x in keep):
                name = "transcript-permission-denied.jsonl"
            else:
                continue
            (OUT / name).write_text("".join(rewrite(x, root) + "\n" for x in keep))
        for path in (root / "home" / ".claude" / "projects").glob("*/*/subagents/*.jsonl"):
            lines = [
                x for x in path.read_text().splitlines() if _turn_line(x) or "tool_result" in x
            ]
            out = OUT / "transcript-subagent.jsonl"
            out.write_text("".join(rewrite(x, root) + "\n" for x in lines))
    return 0


def _turn_line(line: str) -> bool:
    """A prompt or an assistant line: what a turn and its API calls are made of."""
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    if obj.get("type") == "assistant":
        return True
    content = (obj.get("message") or {}).get("content")
    return obj.get("type") == "user" and isinstance(content, str) and not content.startswith("<")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
