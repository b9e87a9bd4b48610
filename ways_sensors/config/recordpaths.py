"""The paths a record can have, per section: what `lint` checks a `where` path against.

The envelope's fields come from the record's typed struct (schemas.Record, the source
of schema/record.schema.json); each section's `data` fields are the table of
docs/records.md (tests/test_recordpaths.py holds the two together). Some subtrees are
open: `data.extra` keeps whatever the agent's payload carried, `data.input` and
`data.output` are the tool's own, `way_event` data is whatever the emitter sent, so a
path into them is never called impossible; under `data.input` and `data.output` a
name one letter off a common tool field (`comand`) is still named as a likely typo.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .conditions import is_glob

_TOOL = ("tool_name", "tool_use_id", "mcp_server", "mcp_tool", "tool_kind", "command")
USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "api_calls",
)
DATA: dict[str, tuple[str, ...]] = {
    "user_prompt": ("prompt",),
    "queued_message": ("text", "via"),
    "assistant_response": ("text", "interrupted", "model", "usage", "usage_missing"),
    "tool_call": (*_TOOL, "input"),
    "tool_result": (*_TOOL, "status", "output", "error"),
    "permission": (
        "phase",
        "tool_name",
        "tool_use_id",
        "input",
        "mode",
        "suggestions",
        "decision",
        "source",
        "detail",
        "reason",
    ),
    "notification": ("type", "message", "title"),
    "error": ("error", "details", "text"),
    "subagent": ("phase", "agent_id", "agent_type", "model", "usage"),
    "compaction": ("phase", "trigger", "instructions", "summary"),
    "session_start": ("source", "model", "previous_session_id"),
    "session_end": ("reason", "synthesized", "last_seen"),
    "way_event": ("kind",),
}
OPEN_DATA = frozenset({"way_event"})  # data is whatever the emitter sent
OPEN = frozenset({"extra", "input", "output", "suggestions", "details", "detail", "error"})
# common tool input and output fields: a near miss of one of these is named as a typo
TOOL_FIELDS = (
    "command",
    "description",
    "file_path",
    "path",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "pattern",
    "glob",
    "url",
    "query",
    "prompt",
    "subagent_type",
    "notebook_path",
    "offset",
    "limit",
    "timeout",
    "stdout",
    "stderr",
    "exit_code",
    "interrupted",
)


def envelope() -> tuple[str, ...]:
    """The record's top-level fields, from its typed struct."""
    from .schemas import Record

    return tuple(f.encode_name for f in msgspec.structs.fields(Record))


def known_paths(sections: Iterable[str]) -> list[str]:
    """Every closed path the sections' records have (for suggestions)."""
    out = [*envelope()]
    for section in sections:
        out += [f"data.{k}" for k in (*DATA.get(section, ()), "extra")]
        out += [f"data.usage.{k}" for k in USAGE if "usage" in DATA.get(section, ())]
        for k in ("input", "output"):
            if k in DATA.get(section, ()):
                out += [f"data.{k}.{t}" for t in TOOL_FIELDS]
    return list(dict.fromkeys(out))


def _has(section: str, parts: list[str]) -> bool | None:
    """True: the section can have the path; False: it cannot; None: a likely typo under
    an open tool field (the caller names the near miss)."""
    head, rest = parts[0], parts[1:]
    if is_glob(head):
        return True
    if head != "data":
        return head in envelope() and (not rest or head in ("chain", "redactions"))
    if not rest or section in OPEN_DATA:
        return True
    key, deeper = rest[0], rest[1:]
    if is_glob(key):
        return True
    fields = DATA.get(section, ())
    if key != "extra" and key not in fields:
        return False
    if key == "usage" and deeper:
        return is_glob(deeper[0]) or deeper[0] in USAGE
    if key in ("input", "output") and deeper and not is_glob(deeper[0]):
        import difflib

        name = deeper[0]
        near = difflib.get_close_matches(name, TOOL_FIELDS, n=1, cutoff=0.8)
        if name not in TOOL_FIELDS and near:
            return None
    return key in OPEN or key == "extra" or not deeper


def impossible(path: str, sections: Iterable[str]) -> str | None:
    """Why no record of these sections can have `path` (naming the nearest real path),
    or None when some can."""
    import difflib

    chosen = list(sections)
    parts = path.split(".")
    if any(_has(s, parts) for s in chosen):
        return None
    near = difflib.get_close_matches(path, known_paths(chosen), n=1, cutoff=0.6)
    others = [s for s in DATA if s not in chosen and s not in OPEN_DATA and _has(s, parts)]
    why = f"can never hold: no {' or '.join(chosen)} record has `{path}`"
    if others:
        why += f" ({', '.join(others[:3])} records do)"
    return why + (f"; did you mean `{near[0]}`?" if near else "")
