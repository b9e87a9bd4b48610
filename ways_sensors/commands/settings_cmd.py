"""`ways settings get|set|unset|help|list [--json]`: arguments in, services/settings.py's
results out.

Exit codes: 0 done, 2 usage error or unknown key, 3 value rejected by the spec (or
enabling a rule whose preview was never seen, or an empty project folder), 4 written
but a higher layer still decides the value, 5 write failed.

JSON: get -> {"key", "value", "layer", "default", "file"}; list -> [that, ...];
help -> {"key", "type", "default", "help"}; set -> {"key", "value", "file",
"created_rule", "overridden"}; unset -> {"key", "layer", "file", "removed"}.
"""

from __future__ import annotations

import argparse
import json

from ..services.table import show

# services/settings.py loads every layer's machinery (YAML, the spec's types): each
# command imports it when it runs, so `list` can answer from listcache.py without it


def _project(args: argparse.Namespace) -> str | None:
    return getattr(args, "project", None)


def cmd_get(args: argparse.Namespace) -> int:
    from ..services import settings as service

    found = service.get_setting(args.key, _project(args))
    print(json.dumps(found.as_json(), indent=2) if args.json else show(found.value))
    return 0


def cmd_help(args: argparse.Namespace) -> int:
    from ..services import settings as service

    h = service.help_for(args.key)
    if args.json:
        print(json.dumps(h.as_json(), indent=2))
        return 0
    print(f"{h.key}\n  type:    {h.type}\n  default: {show(h.default)}\n  {h.help}")
    print(f"  set it:  ways settings set {h.key} VALUE [--project DIR]")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ..services import listcache, table

    rows = listcache.listing(_project(args))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(
        table.render(
            ["KEY", "VALUE", "LAYER"], [[r["key"], show(r["value"])[:60], r["layer"]] for r in rows]
        )
    )
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    from ..services import settings as service

    done = service.set_setting(args.key, service.parse_value(args.value), _project(args))
    if getattr(args, "json", False):
        print(json.dumps(done.as_json(), indent=2))
    else:
        print(f"{done.key} = {show(done.value)}  ({done.file})")
        if done.created_rule:
            sensor, rule = done.created_rule.split("/")
            print(
                f"{done.created_rule} starts disabled: run `ways sensors test "
                f"{done.created_rule}`, then set ways.sensors.{sensor}.rules.{rule}.enabled true"
            )
    if done.overridden:
        raise done.overridden
    return 0


def cmd_unset(args: argparse.Namespace) -> int:
    from ..config.settings import PROJECT_SENSORS
    from ..services import settings as service

    done = service.unset_setting(args.key, _project(args))
    if getattr(args, "json", False):
        print(json.dumps(done.as_json(), indent=2))
    elif done.key == PROJECT_SENSORS:
        print(f"{PROJECT_SENSORS} " + ("unset" if done.removed else "was not set"))
    elif done.removed:
        print(f"{done.key} unset in {done.file}")
    else:
        print(f"{done.key} is not set at the {done.layer} layer")
    return 0
