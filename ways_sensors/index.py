"""What the hook routes by, read on every event: every agent's face, and the compiled
rule index. The face says which sections an event can yield, the index which sections
some enabled rule wants; an event neither joins is dropped before anything else is
imported. One module for both because every import adds to the hook's start (a file
lookup, a read, an unmarshal), and these two are on the path of every tool call
(bench/RESULTS.md, Hook latency). Stdlib-only and import-free (`posix`, `sys`).

Faces (agents.protocols.Face): AGENTS below, one AgentFace per agent, the agents
registry's entries (agents/__init__.py is the registry's door: names, faces, and each
agent's adapter package, which nothing on the hook's path imports). Adding an agent is
its adapter package plus its entry in AGENTS.

The compiled rule index: one per project, at `<cache>/indexes/<tail>-<fnv1a32>.idx`,
keyed by what `stat` shows of the sensor files (compute_key). This module reads it
(`fresh`, `parse`); indexbuild.py writes it, and its docstring holds the file's format,
where it is trusted from and what a failed build leaves.
"""

from . import __version__, roots
from .roots import posix

TYPE_CHECKING = False  # type checkers read it as True; `typing` imports `re`
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# --- every agent's face ------------------------------------------------------------------

# the agent of entries, records and commands that name none: spelled here, once
DEFAULT = "claude-code"
# the largest hook payload read (the hook drains and drops a larger one); verify/read.py
# bounds a record line by it
MAX_PAYLOAD = 64 << 20


class AgentFace:
    """What the hook knows of one agent (protocols.Face): raw payload keys, events and
    their sections. Attributes are upper-case, as the Protocol's members."""

    def __init__(
        self,
        name: str,
        *,
        package: str,
        event_field: bytes,
        session_field: bytes,
        transcript_field: "bytes | None",
        project_env: str,
        start_event: "str | None",
        end_event: "str | None",
        event_sections: "Mapping[str, tuple[str, ...]]",
        alt_session_field: "bytes | None" = None,
        size_events: "tuple[str, ...]" = (),
        also: "Mapping[str, tuple[bytes, str, tuple[str, ...]]] | None" = None,
        tool_name: "Mapping[str, bytes] | None" = None,
    ) -> None:
        self.NAME = name
        self.PACKAGE = package  # the adapter package; its `adapter` module is the rest
        self.EVENT_FIELD = event_field  # payload key of the event name
        self.SESSION_FIELD = session_field  # ... of the session id
        self.ALT_SESSION_FIELD = alt_session_field  # a second one, read if the first is absent
        self.TRANSCRIPT_FIELD = transcript_field  # ... of the session file's path, if any
        self.PROJECT_ENV = project_env  # names the project (else the working directory)
        self.START_EVENT = start_event  # (re)starts a session
        self.END_EVENT = end_event  # ends one: the dispatcher drains, then exits
        self.SIZE_EVENTS = size_events  # beside the start: the hook notes the file's size
        self.EVENT_SECTIONS = event_sections  # event -> the sections it can yield
        # event -> (payload key, value, more sections): sections a payload's value adds
        self.ALSO = also or {}
        # event -> {record path: the top-level payload key its tool records copy it from
        # as is}: what prefilter.py decides a blocking rule's `where` on
        self.VERBATIM = {e: {"data.tool_name": k} for e, k in (tool_name or {}).items()}

    def __repr__(self) -> str:
        return "AgentFace(%r)" % self.NAME

    def sections_for(self, event: str, field: "Callable[[bytes], str | None]") -> "tuple[str, ...]":
        """The event's sections; `field(key)` reads a top-level string of the payload."""
        sections = self.EVENT_SECTIONS.get(event, ())
        more = self.ALSO.get(event)
        if more is not None and field(more[0]) == more[1]:
            sections = (*sections, *more[2])
        return sections


def project_dir(var: "str | None" = None) -> str:
    """roots.project_dir with the default agent's variable when `var` is None."""
    return roots.project_dir(var or AGENTS[DEFAULT].PROJECT_ENV)


_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
# Claude Code's events that read the transcript (SIZE_EVENTS: the hook notes its size)
TURN_EVENTS = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure")
_TOOL_EVENTS_CAMEL = ("preToolUse", "postToolUse", "postToolUseFailure")
# Gemini, Cursor, Copilot: a prompt names its turn's call ids, a call is what a result pairs
# with (pairing.py), so both are spooled whenever a rule selects either
_PAIRED = ("tool_call", "tool_result")

AGENTS = {
    face.NAME: face
    for face in (
        AgentFace(
            DEFAULT,
            package="ways_sensors.agents.claude_code",
            event_field=b"hook_event_name",
            session_field=b"session_id",
            transcript_field=b"transcript_path",
            project_env="CLAUDE_PROJECT_DIR",  # Claude Code sets it for hooks; `cwd` follows `cd`
            start_event="SessionStart",
            end_event="SessionEnd",
            # SPEC section 4's table, plus: SessionEnd yields the replies and queued messages
            # the transcript still holds, SessionStart tells the dispatcher where a resumed
            # transcript's new part begins, and every event that reads the transcript yields
            # the permission decisions written there; PreToolUse joins a later permission
            # request to its call. What an event tells the builder about later records
            # is spooled whenever a rule selects one of those, so no record depends on
            # what other rules select: UserPromptSubmit (a repeated prompt_id is a queued
            # message), SubagentStart (the subagent's type on its replies and decisions),
            # SessionStart (where the transcript's reading starts; subagents are told
            # from the client's own agents after it). The events whose records read the
            # transcript note its size (one stat): the dispatcher, however late, reads it
            # as it stood when the hook ran, never into a later turn
            event_sections={
                "UserPromptSubmit": ("user_prompt", "queued_message"),
                "PreToolUse": ("tool_call", "permission"),
                "PermissionRequest": ("permission",),
                "PermissionDenied": ("permission",),
                "PostToolUse": ("tool_result", "queued_message", "permission"),
                "PostToolUseFailure": ("tool_result", "queued_message", "permission"),
                "Notification": ("notification",),
                "Stop": ("assistant_response", "queued_message", "permission"),
                "StopFailure": ("error", "assistant_response", "queued_message", "permission"),
                "SubagentStart": ("subagent", "assistant_response", "permission"),
                "SubagentStop": ("subagent", "assistant_response", "permission"),
                "SessionStart": (
                    "session_start",
                    "assistant_response",
                    "queued_message",
                    "subagent",
                    "permission",
                ),
                "SessionEnd": ("session_end", "assistant_response", "queued_message", "permission"),
                "PreCompact": ("compaction",),
                "PostCompact": ("compaction",),
            },
            also={"SessionStart": (b"source", "compact", ("compaction",))},  # after a compaction
            size_events=TURN_EVENTS,
            tool_name=dict.fromkeys(
                ("PreToolUse", "PostToolUse", "PostToolUseFailure"), b"tool_name"
            ),
        ),
        AgentFace(
            "codex",
            package="ways_sensors.agents.codex",
            event_field=b"hook_event_name",
            session_field=b"session_id",
            transcript_field=b"transcript_path",
            project_env="CODEX_PROJECT_DIR",  # not set by Codex: the hook's working directory
            start_event="SessionStart",
            end_event="SessionEnd",
            event_sections={
                "UserPromptSubmit": ("user_prompt",),
                "PreToolUse": ("tool_call",),
                "PostToolUse": ("tool_result",),
                "Stop": ("assistant_response", "tool_result"),
                "SubagentStart": ("subagent",),
                "SubagentStop": ("subagent", "assistant_response", "tool_result"),
                "SessionStart": ("session_start",),
                "SessionEnd": ("session_end", "tool_result"),
                "PreCompact": ("compaction",),
                "PostCompact": ("compaction",),
            },
            tool_name=dict.fromkeys(("PreToolUse", "PostToolUse"), b"tool_name"),
        ),
        AgentFace(
            "gemini",
            package="ways_sensors.agents.gemini",
            event_field=b"hook_event_name",
            session_field=b"session_id",
            transcript_field=b"transcript_path",
            project_env="GEMINI_PROJECT_DIR",  # Gemini CLI sets it for hooks
            start_event="SessionStart",
            end_event="SessionEnd",
            # the hook notes the chat file's size there too: what followed a PreCompress,
            # and how far a reply's tokens are read (builder.py)
            size_events=("PreCompress", "AfterAgent"),
            event_sections={
                "BeforeAgent": ("user_prompt", *_PAIRED),
                "AfterAgent": ("assistant_response",),
                "BeforeTool": _PAIRED,
                "AfterTool": ("tool_result",),
                "PreCompress": ("compaction",),
                "SessionStart": ("session_start",),
                "SessionEnd": ("session_end", "compaction"),
            },
            tool_name=dict.fromkeys(("BeforeTool", "AfterTool"), b"tool_name"),
        ),
        AgentFace(
            "cursor",
            package="ways_sensors.agents.cursor",
            event_field=b"hook_event_name",
            session_field=b"conversation_id",
            transcript_field=b"transcript_path",
            project_env="CURSOR_PROJECT_DIR",  # else the hook's working directory, the workspace
            start_event="sessionStart",
            end_event="sessionEnd",
            event_sections={
                "sessionStart": ("session_start",),
                "sessionEnd": ("session_end",),
                "beforeSubmitPrompt": ("user_prompt", *_PAIRED),
                "preToolUse": _PAIRED,
                "postToolUse": ("tool_result",),
                "postToolUseFailure": ("tool_result",),
                "beforeShellExecution": _PAIRED,
                "afterShellExecution": ("tool_result",),
                "beforeMCPExecution": _PAIRED,
                "afterMCPExecution": ("tool_result",),
                "beforeReadFile": _PAIRED,
                "afterFileEdit": ("tool_result",),
                "afterAgentResponse": ("assistant_response",),
                "subagentStart": ("subagent",),
                "subagentStop": ("subagent",),
                "preCompact": ("compaction",),
            },
            tool_name=dict.fromkeys(
                ("preToolUse", "postToolUse", "postToolUseFailure"), b"tool_name"
            ),
        ),
        AgentFace(
            "copilot",
            package="ways_sensors.agents.copilot",
            event_field=b"hook_event_name",
            session_field=b"session_id",
            alt_session_field=b"sessionId",  # the camelCase dialect's (read second)
            transcript_field=b"transcript_path",
            project_env="COPILOT_PROJECT_DIR",  # else the hook's working directory, the repository
            start_event="SessionStart",
            end_event="SessionEnd",
            event_sections={
                "SessionStart": ("session_start",),
                "SessionEnd": ("session_end",),
                "UserPromptSubmit": ("user_prompt", *_PAIRED),
                "PreToolUse": _PAIRED,
                "PostToolUse": ("tool_result",),
                "PostToolUseFailure": ("tool_result",),
                "SubagentStop": ("subagent",),
                "PreCompact": ("compaction",),
                "sessionStart": ("session_start",),
                "sessionEnd": ("session_end",),
                "userPromptSubmitted": ("user_prompt", *_PAIRED),
                "preToolUse": _PAIRED,
                "postToolUse": ("tool_result",),
                "postToolUseFailure": ("tool_result",),
                "subagentStart": ("subagent",),
                "subagentStop": ("subagent",),
                "preCompact": ("compaction",),
            },
            tool_name={
                **dict.fromkeys(_TOOL_EVENTS, b"tool_name"),
                **dict.fromkeys(_TOOL_EVENTS_CAMEL, b"toolName"),
            },
        ),
    )
}


# --- the compiled rule index ---------------------------------------------------------------

MAGIC = "ways-sensors-index 2"


def fnv1a32(text: str) -> str:
    h = 0x811C9DC5
    for b in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "%08x" % h


def index_path(project: str) -> str:
    tail = "".join(c if c.isalnum() else "-" for c in project[-40:]).strip("-") or "root"
    return roots.cache_root() + "/indexes/" + tail + "-" + fnv1a32(project) + ".idx"


def _folder_lines(folder: str, out: list[str]) -> None:
    try:
        st = posix.stat(folder)
    except OSError:
        out.append("d - " + folder)
        return
    out.append("d %d %s" % (st.st_mtime_ns, folder))
    try:
        entries = sorted(posix.listdir(folder))
    except OSError:
        return
    for name in entries:
        if name.endswith(".yaml") or name.endswith(".yml"):
            path = folder + "/" + name
            try:
                st = posix.stat(path)
            except OSError:
                continue
            out.append("f %d %d %s" % (st.st_size, st.st_mtime_ns, path))


def compute_key(project: str) -> str:
    """The index key for `project`: one line per stat, newline-joined."""
    lines = ["v " + __version__, "p " + project]
    _folder_lines(roots.shipped_sensor_dir(), lines)
    for managed in roots.managed_roots():
        _folder_lines(managed + "/sensors", lines)
    _folder_lines(roots.user_sensor_dir(), lines)
    _folder_lines(roots.project_sensor_dir(project), lines)
    for cfg in [roots.config_file()] + [m + "/config.yaml" for m in roots.managed_roots()]:
        try:
            st = posix.stat(cfg)
            lines.append("c %d %d %s" % (st.st_size, st.st_mtime_ns, cfg))
        except OSError:
            lines.append("c - " + cfg)
    return "\n".join(line.replace("\n", "\\n") for line in lines)


class Index:
    """The parsed top half of an index file."""

    __slots__ = ("async_sections", "blocking_sections", "filters", "key", "rules_text")

    def __init__(
        self,
        async_sections: frozenset[str],
        blocking_sections: frozenset[str],
        key: str,
        rules_text: str,
        filters: "tuple[str, ...]" = (),
    ) -> None:
        self.async_sections = async_sections
        self.blocking_sections = blocking_sections
        self.key = key
        self.rules_text = rules_text
        self.filters = filters  # the blocking rules' lines for prefilter.py


def parse(data: str) -> Index | None:
    """Parse an index file's text; None when it is missing a part or has the wrong size."""
    head, sep, rest = data.partition("\n")
    if not sep or not head.startswith(MAGIC + " "):
        return None
    try:
        if int(head[len(MAGIC) + 1 :]) != len(data.encode("utf-8", "surrogateescape")):
            return None
        lines = rest.split("\n", 3)
        a, b, k = lines[0], lines[1], lines[2]
        if not (a.startswith("async ") and b.startswith("blocking ") and k.startswith("key ")):
            return None
        n = int(k[4:])
        body = lines[3].split("\n", n)
        key = "\n".join(body[:n])
        tail = body[n] if len(body) > n else ""
        f, _, tail = tail.partition("\n")
        if not f.startswith("filters "):
            return None
        m = int(f[8:])
        parts = tail.split("\n", m) if m else [tail]
        filters, tail = tuple(parts[:m]), parts[m] if len(parts) > m else ""
        if not tail.startswith("rules\n"):
            return None
    except (ValueError, IndexError):
        return None
    asyn = frozenset(a[6:].split()) - {"-"}
    block = frozenset(b[9:].split()) - {"-"}
    return Index(asyn, block, key, tail[6:], filters)


def read(project: str) -> Index | None:
    fd = roots.trusted_fd(index_path(project))
    if fd is None:
        return None
    try:
        chunks = []
        while True:
            chunk = posix.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        posix.close(fd)
    return parse(b"".join(chunks).decode("utf-8", "surrogateescape"))


def fresh(project: str) -> tuple[Index | None, str]:
    """(the index for `project`, or None when it is stale or bad; the current key).
    The caller rebuilds a stale one with indexbuild (imported only then, so this
    module imports nothing of the build: indexbuild.current does both)."""
    key = compute_key(project)
    idx = read(project)
    return (idx if idx is not None and idx.key == key else None), key


HOOK_BUDGET = 3.0  # seconds a hook waits for a rebuild; a normal one takes a fraction
