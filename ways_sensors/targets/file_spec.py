"""The `file` target's spec: the value of `dispatch.file` in a sensor file (its schema,
`ways settings` keys and validation come from it). Apart from file.py, which loads it on
first use, because msgspec's import is the largest part of what a blocking rule's hook
would pay for it (bench/RESULTS.md, Blocking path cost)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from ..regex import Lazy
from .base import PLACEHOLDERS

_PLACEHOLDER_RE = Lazy(r"\{([^{}/]*)\}")


class FileTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Append one line per record to a file; placeholders {session_id} {date} {sensor} {rule}."""

    path: Annotated[str, Meta(min_length=1)]
    format: Annotated[
        Literal["json", "text", "ocsf", "ecs"],
        Meta(
            description="each line: the record (json), a readable line (text), an OCSF "
            "event or an ECS document (docs/security.md)"
        ),
    ] = "json"

    def __post_init__(self) -> None:
        if not (self.path.startswith("/") or self.path.startswith("~")):
            raise ValueError("a file target's path must be absolute or start with ~")
        for name in _PLACEHOLDER_RE.findall(self.path):
            if name not in PLACEHOLDERS:  # else a folder literally named {sesion_id}
                import difflib

                close = difflib.get_close_matches(name, PLACEHOLDERS, n=1)
                hint = f": did you mean {{{close[0]}}}?" if close else ""
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                raise ValueError(f"unknown placeholder {{{name}}}{hint} (the path takes {known})")
