"""`ways sessions import` as a real command: the agents' own session files from their
default folders, each record as the store rule's pipeline finishes it (what `ways
sensors test store/all` shows of the same file), marked imported, stored once however
often it runs, one session with a live recording of it, and never a planted secret."""

from __future__ import annotations

import json
import os
import shutil

from ..agents.fixtures import CODEX, GEMINI
from ..conftest import TRANSCRIPT
from ..planting import planted
from .play import PLANT, SECRETS, leaks, play

ROLLOUT = ".codex/sessions/2026/11/30/rollout-2026-11-30T00-16-58-x.jsonl"
CHAT = ".gemini/tmp/0a1b/chats/session-2026-11-30T00-16-b789.jsonl"
FILES = {  # agent -> (fixture file, where the agent keeps it under HOME)
    "claude-code": (TRANSCRIPT, f".claude/projects/-home-dev-project/{TRANSCRIPT.name}"),
    "codex": (CODEX / "rollout.jsonl", ROLLOUT),
    "gemini": (GEMINI / "chat.jsonl", CHAT),
}


def place(install, plant=None) -> dict[str, object]:
    """Each agent's fixture session file where the agent keeps it; agent -> path."""
    out = {}
    for agent, (src, rel) in FILES.items():
        dest = install.home / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if plant is None:
            shutil.copy(src, dest)
        else:
            lines = [json.dumps(plant(json.loads(x))) for x in src.read_text().splitlines() if x]
            dest.write_text("\n".join(lines) + "\n")
        out[agent] = dest
    return out


def imported(install, *args: str) -> dict:
    r = install.ways("sessions", "import", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_each_agent_s_files_are_imported_once_as_the_store_rule_finishes_them(install):
    paths = place(install)
    first = imported(install)
    assert (first["files"], first["sessions"], first["live"], first["unreadable"]) == (3, 3, 0, [])
    again = imported(install)
    assert (again["records"], again["sessions"], again["unchanged"]) == (0, 0, 3)

    listed = json.loads(install.ways("sessions", "list", "--json", "--imported").stdout)
    assert sorted(s["agent"] for s in listed) == sorted(FILES)
    assert json.loads(install.ways("sessions", "list", "--json", "--live").stdout) == []
    total = 0
    for agent, path in paths.items():
        sid = next(s["session_id"] for s in listed if s["agent"] == agent)
        records = json.loads(install.ways("sessions", "show", sid, "--json").stdout)["records"]
        test = ("sensors", "test", "store/all", "--transcript", str(path), "--agent", agent)
        r = install.ways(*test, "--json", "--all")
        assert r.returncode == 0, r.stderr
        sent = json.loads(r.stdout)["sent"]
        assert len(records) == len(sent) > 3, agent
        for got, want in zip(records, sent, strict=True):
            assert (got["rule"], got["imported"], "chain" in got) == ("import", True, False)
            assert (got["section"], got["agent"], got["data"]) == (
                want["section"],
                want["agent"],
                want["data"],
            ), agent
        total += len(records)
    assert first["records"] == total


def test_a_session_recorded_live_is_not_imported_again(install):
    assert install.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
    sid = play(install, "claude-code")
    before = json.loads(install.ways("sessions", "show", sid, "--json").stdout)
    place(install)
    got = imported(install, "--agent", "claude-code")
    assert (got["live"], got["sessions"]) == (1, 0)
    after = json.loads(install.ways("sessions", "show", sid, "--json").stdout)
    assert after == before and after["session"]["imported"] == 0


def test_imported_secrets_are_masked(install):
    place(install, lambda value: planted(value, PLANT))
    got = imported(install)
    assert got["records"] > 0
    folder = install.home / ".local" / "share" / "agent-ways" / "store"
    everything = b"".join(f.read_bytes() for f in folder.iterdir())
    shown = install.ways("sessions", "search", "REDACTED", "--json", "--limit", "0")
    assert leaks(everything + shown.stdout.encode()) == []
    for kind in SECRETS:
        assert f"[REDACTED:{kind}:" in shown.stdout


def test_what_cannot_be_imported_says_so(install, tmp_path):
    r = install.ways("sessions", "import")
    assert (r.returncode, r.stderr.strip()) == (1, "no session files found")
    r = install.ways("sessions", "import", "--agent", "cursor")
    assert r.returncode == 2 and "cursor keeps no session file" in r.stderr
    r = install.ways("sessions", "import", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "no such file or folder" in r.stderr


def test_many_files_import_in_order_with_an_unreadable_one_among_them(install):
    """A folder of sessions is replayed by worker processes: every file's records are
    stored as the same file's alone would be, an unreadable one (a FIFO) is named and
    the others are not held back by it."""
    folder = install.home / ".claude" / "projects" / "-home-dev-project"
    folder.mkdir(parents=True)
    old = TRANSCRIPT.stem
    text = TRANSCRIPT.read_text()
    sids = [f"00000000-0000-4000-8000-00000000000{i}" for i in range(6)]
    for sid in sids:
        (folder / f"{sid}.jsonl").write_text(text.replace(old, sid))
    fifo = folder / "00000000-0000-4000-8000-000000000003a.jsonl"
    os.mkfifo(fifo)
    got = imported(install, "--agent", "claude-code")
    assert (got["files"], got["sessions"], got["unreadable"]) == (7, 6, [str(fifo)])

    def timeline(sid: str) -> list[tuple]:
        shown = json.loads(install.ways("sessions", "show", sid, "--json").stdout)
        return [(r["rule_seq"], r["section"], r["data"].get("tool_name")) for r in shown["records"]]

    first = timeline(sids[0])
    assert len(first) > 3 and got["records"] == 6 * len(first)
    assert all(timeline(sid) == first for sid in sids[1:])


DRIVER = """
import json, os, sys
from ways_sensors.services import session_import as si
from ways_sensors.store import default_path, sqlite
si.WORKER_FILE_MAX = int(sys.argv[1])
me, here, streamed = os.getpid(), [], si._streamed
def noted(item):  # a worker's calls are noted in its own copy of the list, not here
    if os.getpid() == me:
        here.append(os.path.basename(item[1]))
    return streamed(item)
si._streamed = noted
files = si.plan("claude-code", [])
got = si.run(sqlite.connect(default_path()), files, workers=2).as_json()
print(json.dumps({**got, "here": here}))
"""


def test_a_file_over_the_worker_bound_is_replayed_in_its_place_by_the_command(install):
    """A file larger than WORKER_FILE_MAX is replayed by the command's own process,
    batch by batch, between the workers' files: the same records, in the same order."""
    import subprocess
    import sys

    folder = install.home / ".claude" / "projects" / "-home-dev-project"
    folder.mkdir(parents=True)
    old, text = TRANSCRIPT.stem, TRANSCRIPT.read_text()
    sids = [f"00000000-0000-4000-8000-00000000000{i}" for i in range(5)]
    sids.insert(2, "00000000-0000-4000-8000-0000000000020000-longer-and-so-larger")
    for sid in sids:
        (folder / f"{sid}.jsonl").write_text(text.replace(old, sid))
    bound = (folder / f"{sids[0]}.jsonl").stat().st_size  # the longer one is over it
    r = subprocess.run(
        [sys.executable, "-c", DRIVER, str(bound)], env=install.env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["files"], got["sessions"], got["unreadable"]) == (6, 6, [])
    assert got["here"] == [f"{sids[2]}.jsonl"]  # the large one here, the others in workers
    listed = json.loads(install.ways("sessions", "list", "--json").stdout)
    assert sorted(s["session_id"] for s in listed) == sorted(sids)
    timelines = [
        [(x["rule_seq"], x["section"]) for x in json.loads(
            install.ways("sessions", "show", sid, "--json").stdout)["records"]]
        for sid in sids
    ]  # fmt: skip
    assert len(timelines[0]) > 3 and all(t == timelines[0] for t in timelines)
