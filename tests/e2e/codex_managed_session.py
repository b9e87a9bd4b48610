"""One real Codex session with ways wired only one way, run inside a private mount
namespace whose /etc is an overlay (tests/e2e/test_codex_managed.py starts it), so
`ways reconcile --managed` writes the real /etc/codex/requirements.toml without
touching the machine's. Codex runs without --dangerously-bypass-hook-trust: a hook
that is not managed waits for a trust review in /hooks that never comes.

    python -m tests.e2e.codex_managed_session ROOT managed|user

`managed`: `ways reconcile --managed --agent codex`, and no user-level hooks file;
`user`: only the user-level `ways reconcile --agent codex`. The records ways wrote are
left under ROOT/audit, the session id in ROOT/session.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import agents_harness as harness


def main(root: Path, mode: str) -> None:
    s = harness.prepare(root, "codex")  # user-level wiring, and a user-level recorder
    if mode == "managed":
        (s.home / ".codex" / "hooks.json").unlink()
        r = s.ways("reconcile", "--managed", "--agent", "codex")
        if r.returncode != 0:
            raise SystemExit(f"reconcile --managed failed: {r.stderr}")
    harness.run_codex(s, ["[plain] just talk"], trust_every_hook=False)
    (root / "session.json").write_text(json.dumps({"session_id": s.session_id}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
