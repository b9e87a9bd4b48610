"""What a transcript says each reply cost, computed here on its own terms for the tests:
an API call is one `message.id` of the `assistant` lines (the usage of its last line),
rendered errors (`model: "<synthetic>"`) are none, and a reply ends with the call that
stopped for anything but `tool_use`."""

from __future__ import annotations

import json
from pathlib import Path

FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def calls(path: Path, subagent: bool = False) -> list[dict]:
    """The API calls of one transcript file, in order: {id, model, usage, stop}; a
    main transcript's sidechain lines are not its own, a subagent file's all are."""
    out: list[dict] = []
    by_id: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        msg = obj.get("message")
        if obj.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        if bool(obj.get("isSidechain")) != subagent:
            continue
        if msg.get("model") == "<synthetic>":
            continue
        call = by_id.get(msg["id"])
        if call is None:
            call = by_id[msg["id"]] = {"id": msg["id"]}
            out.append(call)
        call.update(model=msg.get("model"), usage=msg.get("usage"), stop=msg.get("stop_reason"))
    return out


def total(group: list[dict]) -> dict:
    sums = {f: sum(int(c["usage"].get(f) or 0) for c in group) for f in FIELDS}
    sums["api_calls"] = len(group)
    return sums


def replies(path: Path) -> list[tuple[str, dict]]:
    """(model, usage) of each finished reply of a main transcript, in order."""
    out, group = [], []
    for call in calls(path):
        group.append(call)
        if call["stop"] not in (None, "tool_use"):
            out.append((call["model"], total(group)))
            group = []
    return out


def agent(path: Path) -> tuple[str, dict]:
    """(model, usage) of a subagent's whole file."""
    group = calls(path, subagent=True)
    return group[-1]["model"], total(group)


def tokens(data: dict) -> tuple[str, dict | None]:
    """(model, usage) of a record's data with the price left out: the token counts are
    what the transcript holds; `cost` (or `cost_missing`) is pricing.py's, checked apart."""
    usage = data.get("usage")
    if isinstance(usage, dict):
        assert ("cost" in usage) != ("cost_missing" in usage)  # priced, or says why not
        usage = {k: v for k, v in usage.items() if k not in ("cost", "cost_missing")}
    return data.get("model"), usage
