"""Field projection per rule (`fields:`): what of a record the rule's consumer receives.

A pipeline stage (pipeline.finish) after the rule fields are added and before masking
and chaining, so the chain covers exactly what the consumer receives. Two forms:

    fields: metadata                          the preset below
    fields: {include: [PATH...], exclude: [PATH...]}

PATH is a dotted path with the glob syntax of `where` (conditions.py): one segment per
key, `*`, `?` and `[...]` within a segment, list elements by index (`data.input.edits.0`).
`include` keeps only the fields some path reaches (with the mappings above them; an
included list keeps its reached elements, in order); `exclude` then drops what its
paths reach. Whatever the paths say, the record's identity (ALWAYS_KEPT: what `verify`
and at-least-once consumers key on) stays, and `data` stays a mapping (empty at worst).

`metadata` keeps the envelope (ids, names, section, times, project, hook event), and in
`data` the fields that name things or say how it went (KEPT_DATA: tool name and call
id, status, phase, agent, trigger, source, model, reason...), numbers and booleans of
`data.extra` and its KEPT_EXTRA names; every other value, which may be free text (the
prompt, the reply, queued text, tool input and output, an error, compaction
instructions, anything else in `data.extra`), is replaced by its digest:

    {"hmac": 32 hex digits of HMAC-SHA256(install key, bytes), "size": len(bytes)}

A kept name is kept only while it looks like one (NAME_RE: no spaces, at most 128
characters; KEPT_PATHS may be any path): the same field can be a name in one event and
free text in another (`reason` is `clear` or `logout` on a SessionEnd, but the auto
mode classifier's own sentence on a PermissionDenied), and a value that is not a name
is digested like any other text. The names of `data.extra`'s other keys are the
payload's, and a payload is the agent's (or whoever wrote it): each such key becomes
`~` and the first 16 hex digits of its own HMAC, so even a key name says nothing.

where bytes is a string's UTF-8, or any other value's canonical JSON (sorted keys, no
spaces). The key is the install's redaction key (redact.install_key), so the same text
gives the same digest in every record, rule and session of this install (records still
correlate) and nobody without the key can test a guess against it.

Work is bounded by the sensor file: paths are at most 64 of 256 characters, and a
path is only followed as deep as it has segments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from typing import Any

from .. import sha
from .conditions import is_glob

ALWAYS_KEPT = frozenset(
    {"schema", "section", "seq", "session_id", "timestamp", "sensor", "rule", "rule_seq", "test"}
)
KEPT_DATA = frozenset(
    {
        "tool_name",
        "tool_use_id",
        "mcp_server",
        "mcp_tool",
        "status",
        "phase",
        "agent_id",
        "agent_type",
        "trigger",
        "source",
        "model",
        "reason",
        "via",
        "interrupted",
        "kind",
    }
)
KEPT_PATHS = frozenset({"cwd", "transcript_path", "agent_transcript_path"})
NAME_RE = re.compile(r"[A-Za-z0-9_.:@/+-]{0,128}\Z")
KEPT_EXTRA = frozenset(
    {
        "permission_mode",
        "cwd",
        "transcript_path",
        "agent_transcript_path",
        "stop_hook_active",
        "agent_type",
        "source",
        "model",
        "reason",
        "trigger",
        "notification_type",
    }
)
# where session content (free text) lives, per section: for `lint` and `ways sensors list`
CONTENT = {
    "user_prompt": ("data.prompt", "data.extra"),
    "queued_message": ("data.text",),
    "assistant_response": ("data.text", "data.extra"),
    "tool_call": ("data.input", "data.extra"),
    "tool_result": ("data.output", "data.error", "data.extra"),
    "subagent": ("data.extra",),
    "compaction": ("data.instructions", "data.extra"),
    "session_start": ("data.extra",),
    "session_end": ("data.extra",),
    "way_event": ("data",),  # whatever the emitter sent
}

Path = tuple[str, ...]


def check_fields(include: Sequence[str] | None, exclude: Sequence[str]) -> None:
    """ValueError with a readable reason for a `fields` mapping the stage cannot use."""
    if include is None and not exclude:
        raise ValueError("fields needs include, exclude or both (or the preset `metadata`)")
    for path in (*(include or ()), *exclude):
        if any(not seg for seg in path.split(".")):
            raise ValueError(f"{path!r} is not a dotted path like data.tool_name")
    for path in exclude:
        if path in ALWAYS_KEPT:
            raise ValueError(f"{path} is always kept: it is part of the record's identity")


def _split(paths: Iterable[str]) -> list[Path]:
    return [tuple(p.split(".")) for p in paths]


def _hit(key: Any, seg: str) -> bool:
    if not isinstance(key, str):
        return False
    return fnmatchcase(key, seg) if is_glob(seg) else key == seg


_MISSING = object()


def _pick(value: Any, paths: list[Path]) -> Any:
    """What of `value` the (relative) paths reach, or _MISSING."""
    if any(not p for p in paths):
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            tails = [p[1:] for p in paths if _hit(k, p[0])]
            if tails:
                got = _pick(v, tails)
                if got is not _MISSING:
                    out[k] = got
        return out if out else _MISSING
    if isinstance(value, list):
        kept = []
        for i, v in enumerate(value):
            tails = [p[1:] for p in paths if _hit(str(i), p[0])]
            if tails:
                got = _pick(v, tails)
                if got is not _MISSING:
                    kept.append(got)
        return kept if kept else _MISSING
    return _MISSING  # a path goes deeper than the value does


def _drop(value: Any, paths: list[Path]) -> Any:
    """`value` without what the (relative, non-empty) paths reach."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            tails = [p[1:] for p in paths if _hit(k, p[0])]
            if any(not t for t in tails):
                continue
            out[k] = _drop(v, tails) if tails else v
        return out
    if isinstance(value, list):
        kept = []
        for i, v in enumerate(value):
            tails = [p[1:] for p in paths if _hit(str(i), p[0])]
            if any(not t for t in tails):
                continue
            kept.append(_drop(v, tails) if tails else v)
        return kept
    return value


def select(
    record: dict[str, Any], include: Sequence[str] | None, exclude: Sequence[str]
) -> dict[str, Any]:
    """The include/exclude form; key order as in the record."""
    picked: Any = record
    if include is not None:
        rest = {k: v for k, v in record.items() if k not in ALWAYS_KEPT}
        picked = _pick(rest, _split(include))
        if picked is _MISSING:
            picked = {}
    if exclude:
        picked = _drop(picked, _split(exclude))
    out: dict[str, Any] = {}
    for k, v in record.items():
        if k in ALWAYS_KEPT:
            out[k] = v
        elif k in picked:
            out[k] = picked[k]
        elif k == "data":
            out[k] = {}
    return out


# --- the metadata preset ---------------------------------------------------------------


def _canonical(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8", "surrogatepass")


def digest(value: Any) -> dict[str, Any]:
    """The keyed digest that stands in for a free-text value (the format above)."""
    from ..redact import install_key

    data = _canonical(value)
    mac = sha.hmac_sha256_hex(install_key(), data)[:32]
    return {"hmac": mac, "size": len(data)}


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _plain(v: Any) -> bool:
    """A value that cannot carry text: null, a boolean, a number."""
    return v is None or (isinstance(v, (int, float, bool)))


def _named(key: str, v: Any) -> bool:
    """A kept field's value that is a name, not text (the module docstring)."""
    if not _scalar(v):
        return False
    return not isinstance(v, str) or key in KEPT_PATHS or bool(NAME_RE.match(v))


def key_name(key: Any) -> str:
    """An unknown `data.extra` key as metadata shows it: `~` and 16 hex digits."""
    from ..redact import install_key

    data = _canonical(key)
    return "~" + sha.hmac_sha256_hex(install_key(), data)[:16]


def _meta_extra(extra: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in extra.items():
        if k in KEPT_EXTRA:
            out[k] = v if _plain(v) or _named(k, v) else digest(v)
        else:
            out[key_name(k)] = v if _plain(v) else digest(v)
    return out


def metadata(record: dict[str, Any]) -> dict[str, Any]:
    """The `metadata` preset: the envelope, names and sizes; digests for free text."""
    out = dict(record)
    data = record.get("data")
    if not isinstance(data, dict):
        out["data"] = {}
        return out
    meta: dict[str, Any] = {}
    for k, v in data.items():
        if k == "extra" and isinstance(v, dict):
            meta[k] = _meta_extra(v)
        elif v is None or (k in KEPT_DATA and _named(k, v)):
            meta[k] = v
        else:
            meta[k] = digest(v)
    out["data"] = meta
    return out


# --- the stage and what lint says of it -----------------------------------------------


def project(record: dict[str, Any], fields: Any) -> dict[str, Any]:
    """The stage: `fields` is the rule's (None: the record as it is)."""
    if fields is None:
        return record
    if fields == "metadata":
        return metadata(record)
    return select(record, fields.include, fields.exclude)


def _reaches(pattern: Path, path: Path) -> bool:
    """An include pattern keeps some of `path` (one is a prefix of the other)."""
    return all(_hit(path[i], pattern[i]) for i in range(min(len(pattern), len(path))))


def _covers(pattern: Path, path: Path) -> bool:
    """An exclude pattern empties `path`: it reaches it or an ancestor, or every child."""
    n = min(len(pattern), len(path))
    if not all(_hit(path[i], pattern[i]) for i in range(n)):
        return False
    return all(seg == "*" for seg in pattern[len(path) :])


def carries_content(fields: Any, sections: Iterable[str]) -> bool:
    """True when a rule with these `fields` may pass free text of these sections on."""
    if fields == "metadata":
        return False
    if fields is None:
        return True
    include = _split(fields.include) if fields.include is not None else None
    exclude = _split(fields.exclude)
    for section in sections:
        for text in CONTENT.get(section, ("data",)):
            path = tuple(text.split("."))
            if include is not None and not any(_reaches(p, path) for p in include):
                continue
            if any(_covers(p, path) for p in exclude):
                continue
            return True
    return False


def describe(fields: Any) -> str:
    """`all`, `metadata` or `projected`: for `ways sensors list`."""
    if fields is None:
        return "all"
    return "metadata" if fields == "metadata" else "projected"
