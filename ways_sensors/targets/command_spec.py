"""The `command` target's spec: the value of `dispatch.command` in a sensor file (its
schema, `ways settings` keys and validation come from it). Apart from command.py, which
loads it on first use, because msgspec's import is the largest part of what a blocking
rule's hook would pay for it (bench/RESULTS.md, Blocking path cost)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct


class CommandTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Run argv without a shell; the record on stdin (default) or as the last argument."""

    argv: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(min_length=1)]
    input: Literal["stdin", "args"] = "stdin"
    format: Annotated[
        Literal["json", "ocsf", "ecs"],
        Meta(description="each record as it is (json), an OCSF event or an ECS document"),
    ] = "json"
    env: dict[str, str] = {}
    cwd: str | None = None
