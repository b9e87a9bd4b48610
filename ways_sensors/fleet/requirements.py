"""Codex's managed hooks: a block of ours in the administrator's `requirements.toml`.

Requirements are Codex's administrator-enforced layer (cloud, MDM, then
`/etc/codex/requirements.toml`; a user's config cannot override them), and the hooks
they hold are managed hooks, run without the `/hooks` trust review a user's hook
needs (tests/e2e/test_codex_managed.py, Codex 0.169: as are, in that release, the
hooks of the system config layer, `/etc/codex/hooks.json`, which `--managed` wrote
before). So `ways reconcile --managed --agent codex` writes inline hook tables
(Codex's hooks.json schema in TOML) into requirements.toml:

    # >>> ways sensors: managed hooks (ways reconcile --managed; --remove takes them out)
    [[hooks.SessionStart]]

    [[hooks.SessionStart.hooks]]
    type = "command"
    command = "..."
    timeout = 15
    ...
    # <<< ways sensors

The block goes at the end of the file, after the administrator's own text, which is
never rewritten (Python reads TOML, it does not write it faithfully): a second run
replaces the block, `--remove` cuts it out. Appended `[[hooks.<Event>]]` tables join
the administrator's own arrays of them; a file that spells its hooks so that they
cannot (an inline `hooks = {...}`, a static array) is refused and left untouched, as
is one that is not valid TOML. Each handler is in a group without a matcher (every
tool, every source), as the user-level wiring (agents/codex/wiring.py).
"""

from __future__ import annotations

import json
from typing import Any

from ..agents.codex.wiring import EVENTS, TIMEOUT

BEGIN = "# >>> ways sensors: managed hooks (ways reconcile --managed; --remove takes them out)"
END = "# <<< ways sensors"


class Unfit(Exception):
    """The file cannot take the block (not TOML, or hooks in a shape it cannot join)."""


def block(command: str) -> str:
    """Our hook tables, between the markers, ending in a newline."""
    quoted = json.dumps(command, ensure_ascii=False)  # a JSON string is a TOML basic string
    lines = [BEGIN]
    for event in EVENTS:
        lines += [f"[[hooks.{event}]]", "", f"[[hooks.{event}.hooks]]", 'type = "command"']
        lines += [f"command = {quoted}", f"timeout = {TIMEOUT}", ""]
    lines[-1] = END
    return "\n".join(lines) + "\n"


def strip(text: str) -> str:
    """The text without our block (and the blank line wiring put before it)."""
    start = text.find("\n" + BEGIN + "\n")
    at_top = text.startswith(BEGIN + "\n")
    if start < 0 and not at_top:
        return text
    begin = 0 if at_top else start + 1
    end = text.find("\n" + END + "\n", begin)
    if end < 0:
        return text  # a block cut short by hand: not ours to guess at
    after = text[end + len(END) + 2 :]
    before = text[:begin]
    if before.endswith("\n\n"):
        before = before[:-1]  # the blank line wiring added
    return before + after


def wire(text: str | None, command: str) -> str:
    """The file's text with our block at its end (replacing any block of ours)."""
    own = strip(text or "")
    if _toml() is None and "hooks" in own:
        raise Unfit("names hooks, and this Python (3.10) cannot read TOML to join ours")
    parse(own, "")  # the administrator's file must be TOML to begin with
    if own and not own.endswith("\n"):
        own += "\n"
    new = own + ("\n" if own else "") + block(command)
    data = parse(new, " with our hooks added")
    if _toml() is None:
        return new
    for event in EVENTS:
        groups = (data.get("hooks") or {}).get(event)
        if not isinstance(groups, list) or not groups or groups[-1].get("hooks") is None:
            raise Unfit(f"its hooks cannot take ours as [[hooks.{event}]] tables")
    return new


def _toml() -> Any:
    """tomllib, or None on Python 3.10 (by name: the type checker holds this module to
    3.10, which has none)."""
    import importlib

    try:
        return importlib.import_module("tomllib")
    except ImportError:
        return None


def parse(text: str, what: str = "") -> dict[str, Any]:
    """The TOML text's data ({} where Python cannot read TOML); Unfit when invalid."""
    toml = _toml()
    if toml is None:
        return {}
    try:
        data: dict[str, Any] = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise Unfit(f"is not valid TOML{what} ({exc})") from None
    return data


def read(path: str) -> dict[str, Any]:
    """The parsed file, {} when missing or unreadable (for status and the inventory)."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse(f.read())
    except (OSError, UnicodeDecodeError, Unfit):
        return {}
