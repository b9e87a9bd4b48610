"""Codex's builder state holds no content (issue 22, defect 8), through the wired hook and
the real dispatcher.

A result whose outcome the rollout does not hold yet is parked; the dispatcher that
parked it exits (idle) before the rollout has it. What stays at rest in the build
cursor is where the result's frame sits in the spool, never the command's output nor
the rollout's `aggregated_output`; the next dispatcher reads the frame back and
releases the result, output and all, once the rollout says how it ended.
"""

from __future__ import annotations

import json
import os

from ..helpers import dispatcher_lock
from .fixtures import CODEX, dispatch, everything, load, records, run_hook

FX = load(CODEX)
OUTPUT = "failing"  # what the failing command printed: the hook's tool_response, the rollout's
# ... as JSON holds it ("failing\n"), not the word alone (a counter's `failing_since_ns`)
TEXT = json.dumps(OUTPUT + "\n")[1:-1].encode()


def at_rest(install) -> dict[str, bytes]:
    """Every state file but the session's spool and journal: {path: bytes}."""
    root = install.state_root
    out = {}
    for folder, _, names in os.walk(root):
        rel = os.path.relpath(folder, root).split(os.sep)
        if len(rel) >= 3 and rel[0] == "sessions" and rel[2] in ("spool", "journal"):
            continue
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def test_a_parked_result_is_held_by_its_spool_frame_not_its_text(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything(out))
    data = FX.session_bytes
    cut = data.rindex(b"\n", 0, data.index(b'"exit_code":3')) + 1  # before its outcome
    rollout = install.root / "agent-home" / "rollout.jsonl"
    rollout.parent.mkdir(parents=True)
    failing = next(
        i for i, x in enumerate(FX.lines) if x["payload"].get("tool_response") == OUTPUT + "\n"
    )

    def play(lines, cut_at=None):
        with dispatcher_lock(install, FX.session_id):
            for i, line in enumerate(lines):
                size = cut if i == cut_at else line["size"]
                rollout.write_bytes(data[:size])
                payload = {**line["payload"], "transcript_path": str(rollout)}
                run_hook(install, "codex", payload)
        dispatch(install, FX.session_id)

    play(FX.lines[: failing + 1], cut_at=failing)  # the dispatcher exits with it parked
    held = {p: b for p, b in at_rest(install).items() if TEXT in b}
    assert held == {}, sorted(held)
    build = install.state_root / "sessions" / FX.session_id / "build.json"
    state = json.loads(json.loads(build.read_text())["trackers"]["codex"])
    tid = FX.lines[failing]["payload"]["tool_use_id"]
    assert [p["id"] for p in state["parked"]] == [tid]
    results = [r for r in records(out) if r["section"] == "tool_result"]
    assert OUTPUT not in {r["data"]["output"].strip() for r in results}  # not released yet
    rollout.write_bytes(data)
    play(FX.lines[failing + 1 :])  # a new dispatcher: reads the frame back, then releases it
    [result] = [
        r for r in records(out) if r["data"].get("tool_use_id") == tid and "status" in r["data"]
    ]
    assert result["data"]["status"] == "failure" and result["data"]["exit_code"] == 3
    assert result["data"]["output"] == OUTPUT + "\n"
    assert result["data"]["error"] == f"Exit code 3\n{OUTPUT}"
    assert not (install.state_root / "sessions" / FX.session_id).exists()  # ended, delivered
    held = {p: b for p, b in at_rest(install).items() if TEXT in b}
    assert held == {}, sorted(held)  # the ledger keeps the builder's state: no content
