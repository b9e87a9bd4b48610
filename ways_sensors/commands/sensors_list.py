"""`ways sensors list [--json]`: every sensor and rule, with its layer, file and flags.

JSON (stable): {"project": str, "project_allowed": bool,
  "sensors": [{"name", "layer", "file", "files": [{"layer", "file"}], "enabled",
               "description", "rules": [{"name", "layer", "file", "enabled",
               "sections", "target", "destination", "mode", "timeout", "delivery",
               "chain", "redact", "off_machine", "fields", "content_off_machine"}]}],
  "refused": [{"name", "layer", "file", "reason"}],
  "errors": [problem, ...]}   (problem: see `ways sensors lint --json`)

`off_machine`: the target may send records off this machine; `fields`: all, metadata
or projected (the rule's `fields:`); `content_off_machine`: session content may leave
(off_machine, and the projection keeps free text). The table's OFF-MACHINE column says
no, content, or "no content" (off the machine, but projected to no free text).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..config.layers import Catalog, load
from ..services import catalog, table


def as_json(cat: Catalog) -> dict[str, Any]:
    return catalog.listing(cat=cat).as_json()


def run(args: argparse.Namespace) -> int:
    cat = load(args.project)
    data = as_json(cat)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    rows = []
    for s in data["sensors"]:
        for r in s["rules"]:
            rows.append(
                [
                    f"{s['name']}/{r['name']}",
                    "on" if r["enabled"] else "off",
                    r["layer"],
                    ",".join(r["sections"])
                    if len(r["sections"]) <= 3
                    else f"{len(r['sections'])} sections",
                    r["destination"],
                    r["mode"],
                    f"{r['timeout']:g}s",
                    r["delivery"],
                    "yes" if r["chain"] else "no",
                    r["redact"],
                    r["fields"],
                    _off(r),
                ]
            )
    for ref in data["refused"]:
        rows.append(
            [f"{ref['name']}", "refused", "project", "", ref["file"], "", "", "", "", "", "", ""]
        )
    headers = [
        "RULE",
        "STATE",
        "LAYER",
        "SECTIONS",
        "TARGET",
        "MODE",
        "TIMEOUT",
        "DELIVERY",
        "CHAIN",
        "REDACT",
        "FIELDS",
        "OFF-MACHINE",
    ]
    if rows:
        print(table.render(headers, rows))
    else:
        print("no sensors; shipped ones live in " + _shipped())
    for s in data["sensors"]:
        files = ", ".join(f"{f['layer']}: {f['file']}" for f in s["files"])
        print(table.paint(f"  {s['name']}: {files}", "dim"))
    if data["refused"]:
        print(
            f"{len(data['refused'])} project sensor(s) refused: "
            f"{cat.project} is not in ways.project_sensors"
        )
    if data["errors"]:
        print(f"{len(data['errors'])} file(s) refused by the spec; see `ways sensors lint`")
    return 0


def _off(row: dict[str, Any]) -> str:
    if not row["off_machine"]:
        return "no"
    return "content" if row["content_off_machine"] else "no content"


def _shipped() -> str:
    from ..roots import shipped_sensor_dir

    return shipped_sensor_dir()
