"""The JSON Schemas in `schema/`, generated from the typed spec (never written by hand).

`python -m ways_sensors.config.schemas` rewrites them; a test fails when the committed files
differ from what the structs generate.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ..index import DEFAULT
from .spec import Section, sensor_schema


class Redaction(msgspec.Struct):
    kind: str
    path: str
    token: str


class Chain(msgspec.Struct):
    prev: str
    hash: str


class User(msgspec.Struct, omit_defaults=True):
    id: str
    email: str | None = None
    name: str | None = None
    team: str | None = None
    groups: list[str] | None = None


class Host(msgspec.Struct, omit_defaults=True):
    name: str
    id: Annotated[str | None, Meta(description="/etc/machine-id, where there is one")] = None


class Identity(msgspec.Struct):
    """Who made the record (docs/fleet.md): the user, this install, this machine."""

    user: User
    install_id: Annotated[str, Meta(description="32 hex digits, one per state root")]
    host: Host


class Inventory(msgspec.Struct):
    """docs/fleet.md: what a central store compares across the fleet to see drift."""

    ways_version: str
    agents_wired: list[str]
    sensors_sha256: str
    hooks_sha256: dict[str, str]


class Record(msgspec.Struct, omit_defaults=True):
    """What a consumer receives: one JSON object per record (SPEC section 5)."""

    schema: Literal["ways.sensor.record/1"]
    section: Section
    seq: int | None  # None on the blocking path, which skips the spool
    session_id: str
    agent_id: str | None
    agent_type: str
    timestamp: str
    project: str
    hook_event: str | None
    data: dict[str, Any]
    sensor: str
    rule: str
    rule_seq: int
    prompt_id: str | None = None
    # added after the first release, so optional for consumers of older records; every
    # record written since carries it
    agent: Annotated[
        str,
        Meta(
            description=f"The coding agent whose hook produced the record: {DEFAULT}, "
            f"codex, gemini, cursor or copilot (records without it came from {DEFAULT})"
        ),
    ] = DEFAULT
    traceparent: Annotated[
        str | None,
        Meta(
            description="The client's trace the session joined: the first valid W3C "
            "traceparent ($TRACEPARENT) its hooks carried; absent before it and without one"
        ),
    ] = None
    identity: Annotated[
        Identity | None,
        Meta(description="The user (ways.identity), the install and the host; on every record"),
    ] = None
    inventory: Annotated[
        Inventory | None,
        Meta(description="On a session's first record (seq 1): the install behind it"),
    ] = None
    test: bool = False
    redactions: list[Redaction] | None = None
    chain: Chain | None = None


def record_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(Record)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://agent-ways.invalid/schema/record.schema.json"
    schema["title"] = "ways sensor record"
    return schema


def rendered() -> dict[str, str]:
    return {
        "sensor.schema.json": json.dumps(sensor_schema(), indent=2, sort_keys=True) + "\n",
        "record.schema.json": json.dumps(record_schema(), indent=2, sort_keys=True) + "\n",
    }


def schema_dir() -> str:
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # ways_sensors/
    inside = os.path.join(pkg, "_schema")
    return inside if os.path.isdir(inside) else os.path.join(os.path.dirname(pkg), "schema")


def main() -> int:
    """Write the schemas; with --check, only say whether the committed ones are stale."""
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    folder = args[0] if args else schema_dir()
    if check:
        stale = []
        for name, text in rendered().items():
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != text:
                stale.append(name)
        for name in stale:
            print(
                f"schema/{name} is stale: run python -m ways_sensors.config.schemas",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for name, text in rendered().items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
        print(os.path.join(folder, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
