"""`ways sessions import`: the agents' own session files, from before ways was
installed (or while it was off), into the session store.

Each file is replayed by its agent's adapter (agents/<agent>/replay.py: the builder
the dispatcher uses, fed from the file), and each record goes through the same
`pipeline.finish` as the shipped store rule's live records, with that rule (`store/all`,
as the layers make it: its projection and masking, enabled or not), so an imported
record is masked exactly as a live one. It is then marked: `rule` is `import`,
`imported: true`, and no `chain` (it never had one to claim). Its `rule_seq` is its
place in the replay, so importing the same file again stores nothing new; a file that
grew since stores what it gained.

One session, live and imported: a session the store already holds from a live store
rule is not imported (counted `live`); a session imported first and recorded live later
goes on in the same session row (no longer marked imported).

Where each agent keeps its files (the default when no PATHS are given):
    claude-code  $CLAUDE_CONFIG_DIR or ~/.claude, projects/<project>/<session>.jsonl
    codex        $CODEX_HOME or ~/.codex, sessions/YYYY/MM/DD/rollout-*.jsonl
    gemini       $GEMINI_CLI_HOME or ~, .gemini/tmp/<project hash>/chats/*.json(l)
Cursor and Copilot CLI keep no session file the adapters replay: their hooks are the
only record of them.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import agents
from ..errors import UsageError

if TYPE_CHECKING:
    from ..store.sqlite import Prepared

REPLAYABLE = ("claude-code", "codex", "gemini")
BATCH = 512
RULE = "store/all"


@dataclass
class Result:
    files: int = 0
    sessions: int = 0  # sessions with at least one new record
    records: int = 0  # new records
    unchanged: int = 0  # sessions already imported whole
    live: int = 0  # sessions the store holds from a live rule: not imported
    unreadable: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sessions": self.sessions,
            "records": self.records,
            "unchanged": self.unchanged,
            "live": self.live,
            "unreadable": self.unreadable,
        }


def default_folder(agent: str) -> str:
    if agent == "claude-code":
        from ..agents.claude_code.replay import projects_root

        return projects_root()
    if agent == "codex":
        from ..agents.codex.rollout import codex_home

        return os.path.join(codex_home(), "sessions")
    from ..agents.gemini.chats import gemini_home

    return os.path.join(gemini_home(), "tmp")


def _is_session_file(agent: str, folder: str, name: str, top: str) -> bool:
    if agent == "claude-code":  # a project's transcripts, not its subagents' files
        return name.endswith(".jsonl") and os.path.dirname(folder) == top
    if agent == "codex":
        return name.startswith("rollout-") and name.endswith(".jsonl")
    return os.path.basename(folder) == "chats" and name.endswith((".jsonl", ".json"))


def session_files(agent: str, folder: str) -> list[str]:
    """The agent's session files under `folder`, sorted."""
    top = os.path.realpath(folder)
    out = []
    for dirpath, _, names in os.walk(top):
        out += [os.path.join(dirpath, n) for n in names if _is_session_file(agent, dirpath, n, top)]
    return sorted(out)


def plan(agent: str, paths: list[str]) -> list[tuple[str, str]]:
    """(agent, file) pairs to import: PATHS' files (folders walked), or the agents'
    default folders; `agent` is one name or `all`."""
    if agent != "all" and agent not in agents.names():
        raise UsageError(f"no agent {agent!r}", hint="one of all, " + ", ".join(agents.names()))
    wanted = REPLAYABLE if agent == "all" else (agent,)
    if agent != "all" and agent not in REPLAYABLE:
        raise UsageError(
            f"{agent} keeps no session file to import: its hooks are its only record",
            hint="import one of " + ", ".join(REPLAYABLE),
        )
    out: list[tuple[str, str]] = []
    if not paths:
        for name in wanted:
            out += [(name, f) for f in session_files(name, default_folder(name))]
        return out
    from .preview import detect

    for path in paths:
        if os.path.isdir(path):
            for name in wanted:
                out += [(name, f) for f in session_files(name, path)]
        elif os.path.isfile(path):
            found = detect(path) or "claude-code"
            out.append((found if agent == "all" else agent, path))
        else:
            raise UsageError(f"no such file or folder: {path}")
    return out


def _rule() -> Any:
    from ..config.layers import load
    from .preview import rule_of

    return rule_of(load(), RULE)[1]


def run(conn: sqlite3.Connection, files: list[tuple[str, str]], workers: int = 0) -> Result:
    """Import `files` in their order. Their replays run in `workers` processes (0: one
    a core, at most WORKERS_MAX), forked after the rule is read; this process alone
    writes the store."""
    from ..store import sqlite as store

    result = Result(files=len(files))
    live = frozenset(
        sid for (sid,) in conn.execute("SELECT session_id FROM sessions WHERE imported = 0")
    )
    for path, sid, replayed in _replays(files, _rule(), live, workers):
        held = conn.execute("SELECT imported FROM sessions WHERE session_id = ?", (sid,))
        row = held.fetchone()  # a live rule may have stored it since the worker looked
        if isinstance(replayed, str) or (row is not None and row[0] == 0):
            result.live += 1
            continue
        try:
            new = 0
            for batch in replayed or ():
                new += store.write_prepared(conn, batch, 30.0)
        except (OSError, ValueError, UnicodeError):
            replayed = None  # a file read in this process failed on the way
        if replayed is None:
            result.unreadable.append(path)
            continue
        result.records += new
        if new:
            result.sessions += 1
        else:
            result.unchanged += 1
    return result


LIVE = "live"  # a replay skipped (the only string a replay gives): a live rule's session
WORKERS_MAX = 8
AHEAD = 2  # files each worker may have replayed before this process writes them
# a larger file is replayed by this process, batch by batch, in its place in the order:
# a worker holds a file's rows whole until they are written, and AHEAD files a worker
# bounds what waits, so a file's size bounds what one holds
WORKER_FILE_MAX = 16 << 20
Replayed = tuple[str, str, "Iterable[list[Prepared]] | str | None"]
_job: dict[str, Any] = {}  # what a worker reads: the rule and the live sessions


def _replays(
    files: list[tuple[str, str]], rule: Any, live: frozenset[str], workers: int
) -> Iterator[Replayed]:
    """Each file's (path, session id, its rows in batches | LIVE | None: unreadable), in
    the files' order."""
    import multiprocessing

    _job.update(rule=rule, live=live)
    workers = min(workers or os.cpu_count() or 1, WORKERS_MAX, len(files))
    # forked, so a worker starts with the rule and the modules this process loaded;
    # where there is no fork, one process does it all
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(_streamed, files)
        return
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    from ..dispatch import pricing

    pricing.load()  # its table loaded once here, not once a worker
    context = multiprocessing.get_context("fork")
    todo = iter(files)
    window: deque[Future[Replayed] | tuple[str, str]] = deque()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        while True:
            while len(window) < AHEAD * workers and (item := next(todo, None)) is not None:
                big = _size(item[1]) > WORKER_FILE_MAX
                window.append(item if big else pool.submit(_replay, item))
            if not window:
                return
            head = window.popleft()
            yield _streamed(head) if isinstance(head, tuple) else head.result()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # the replay says why


def _replay(item: tuple[str, str]) -> Replayed:
    """A worker's replay of one file, its rows whole."""
    path, sid, replayed = _streamed(item)
    if replayed is None or isinstance(replayed, str):
        return path, sid, replayed
    try:
        return path, sid, list(replayed)
    except (OSError, ValueError, UnicodeError):
        return path, sid, None


def _streamed(item: tuple[str, str]) -> Replayed:
    """One file's replay, its rows made batch by batch as they are read."""
    from ..store.sqlite import prepare

    agent, path = item
    try:
        replay = agents.adapter(agent).replay(path)
    except (OSError, ValueError, UnicodeError):
        return path, "", None
    if replay.session_id in _job["live"]:
        return path, replay.session_id, LIVE
    rows = ([prepare(r, line) for r, line in b] for b in _records(replay, _job["rule"]))
    return path, replay.session_id, rows


def _records(replay: Any, rule: Any) -> Iterator[list[tuple[dict[str, Any], str]]]:
    """The file's records, finished as the store rule finishes live ones, in batches."""
    from ..dispatch import pricing
    from ..pipeline.chain import GENESIS
    from ..pipeline.stages import dumps, finish
    from ..records import envelope

    project = ""
    batch: list[tuple[dict[str, Any], str]] = []
    tally = pricing.Tally()  # replies priced as the dispatcher prices them
    for i, draft in enumerate(replay.drafts(), 1):
        tally.apply([draft])
        extra = draft.data.get("extra") if isinstance(draft.data, dict) else None
        cwd = extra.get("cwd") if isinstance(extra, dict) else None
        project = project or (cwd if isinstance(cwd, str) else "")
        record = envelope(draft, i, replay.session_id, project)
        out, _ = finish(record, rule, i, GENESIS)
        out.pop("chain", None)
        out["rule"] = "import"
        out["imported"] = True
        batch.append((out, dumps(out).decode("utf-8")))
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
