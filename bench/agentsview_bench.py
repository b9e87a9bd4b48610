"""`ways sessions import` beside `agentsview sync` on the same Claude Code session
files (issue 38).

The corpus: N copies of the recorded Claude Code session (tests/fixtures: prompts, Bash
calls and results, a failed call, a subagent with its own transcript, a compaction),
each under its own session id and project folder, its prompts and commands numbered
(`module_<i>`, `hello-from-mock-<i>`) so searches find one session or many. Both tools
read the same `~/.claude/projects` of a throwaway HOME. Timed, whole commands, R runs
each on a fresh copy of its database, medians: a full `agentsview sync`
(AGENTSVIEW_NO_DAEMON=1: one process, no server left behind) against `ways sessions
import --agent claude-code`.

`agentsview` is the PyPI package's binary (a Go program, not ours): pass its path with
--agentsview, e.g. from `pip download agentsview --no-deps` unpacked. It runs inside
`unshare -n` (a network namespace with no network: whatever it might reach for, it
reaches nothing), so the bench needs root or user namespaces. Not compared: `agentsview
session search`, which reads through its daemon only (a server this bench would have
to start and reach across that namespace).

Usage: python bench/agentsview_bench.py --agentsview PATH [--sessions N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "claude-code-2.1.332" / "transcript"


def corpus(home: Path, sessions: int) -> int:
    """Write the corpus; how many transcript lines it holds."""
    main = next(FIXTURE.glob("*.jsonl"))
    old = main.stem
    text = main.read_text()
    sub = FIXTURE / old
    lines = 0
    for i in range(sessions):
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"ways-bench-{i}"))
        folder = home / ".claude" / "projects" / f"-home-dev-project-{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)

        def vary(s: str, sid: str = sid, i: int = i) -> str:
            s = s.replace(old, sid).replace("Run the tests", f"Run the tests of module_{i}")
            return s.replace("hello-from-mock", f"hello-from-mock-{i}")

        body = vary(text)
        (folder / f"{sid}.jsonl").write_text(body)
        lines += body.count("\n")
        if sub.is_dir():
            for path in sub.rglob("*"):
                if path.is_file():
                    dest = folder / sid / path.relative_to(sub)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_text(vary(path.read_text()))
    return lines


def throwaway(sessions: int) -> tuple[Path, dict[str, str], int]:
    """A temporary root holding the corpus under its home, the environment that points
    both tools there (agentsview's daemon off), and the corpus' transcript lines."""
    root = Path(tempfile.mkdtemp())
    lines = corpus(root / "home", sessions)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CLAUDE"))}
    env.update(HOME=str(root / "home"), AGENTSVIEW_NO_DAEMON="1", NO_COLOR="1")
    for name in ("config", "cache", "state", "data"):
        env[f"XDG_{name.upper()}_HOME"] = str(root / name)
    return root, env, lines


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - t, r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agentsview", required=True, metavar="PATH")
    ap.add_argument("--sessions", type=int, default=1600)  # 204,800 lines: the 200,000
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    root, env, lines = throwaway(args.sessions)
    home = root / "home"
    ways = str(Path(sys.executable).parent / "ways")
    isolated = ["unshare", "-n", args.agentsview]
    print(f"corpus: {args.sessions:,} Claude Code sessions, {lines:,} transcript lines")
    syncs, imports, stats = [], [], {}
    for _ in range(args.runs):
        shutil.rmtree(home / ".agentsview", ignore_errors=True)
        took, r = timed([*isolated, "sync", "--full"], env)
        assert r.returncode == 0, r.stderr[-500:]
        syncs.append(took)
        shutil.rmtree(root / "data", ignore_errors=True)
        took, r = timed([ways, "sessions", "import", "--agent", "claude-code", "--json"], env)
        assert r.returncode == 0, r.stderr[-500:]
        imports.append(took)
        stats = json.loads(r.stdout)
    a, w = statistics.median(syncs), statistics.median(imports)
    print(f"  agentsview sync --full       {a:7.1f} s   ({min(syncs):.1f}..{max(syncs):.1f})")
    print(f"  ways sessions import         {w:7.1f} s   ({min(imports):.1f}..{max(imports):.1f})")
    print(f"  ways / agentsview: {w / a:.2f}x (goal: at most 1x); ways stored {stats}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
