"""The `ways` command: one argparse tree, each command a function returning an exit code.

`ways hook sensors` is routed before argparse is even imported (it is the hot path),
and `ways --version` prints without importing anything else. Every other command's
module is imported only when that command is chosen (the table below, as pip does).
Errors cross one boundary here: a WaysError becomes one line on stderr, naming the
next step when there is one, and its exit code (see errors.py).
"""

from __future__ import annotations

import sys

# (group, command) -> "module:function" under ways_sensors.commands
COMMANDS = {
    ("reconcile",): "reconcile:run",
    ("status",): "status:run",
    ("demo",): "demo:run",
    ("sensors", "list"): "sensors_list:run",
    ("sensors", "lint"): "sensors_lint:run",
    ("sensors", "dispatch"): "dispatch:run",
    ("sensors", "verify"): "sensors_verify:run",
    ("sensors", "copy"): "sensors_files:copy",
    ("sensors", "rename"): "sensors_files:rename",
    ("sensors", "delete"): "sensors_files:delete",
    ("sensors", "test"): "sensors_test:run",
    ("sensors", "fire"): "sensors_fire:run",
    ("sensors", "emit"): "sensors_emit:run",
    ("settings", "get"): "settings_cmd:cmd_get",
    ("settings", "set"): "settings_cmd:cmd_set",
    ("settings", "unset"): "settings_cmd:cmd_unset",
    ("settings", "help"): "settings_cmd:cmd_help",
    ("settings", "list"): "settings_cmd:cmd_list",
}


def build_parser():
    import argparse

    from . import __version__

    p = argparse.ArgumentParser(
        prog="ways",
        description="ways sensors: record a Claude Code session and dispatch it to consumers.",
    )
    p.add_argument("--version", action="version", version=f"ways {__version__}")
    sub = p.add_subparsers(dest="group", metavar="COMMAND")

    hook = sub.add_parser("hook", help="the hook entry Claude Code runs (wired by reconcile)")
    hook.add_argument("which", choices=["sensors"])
    hook.add_argument("--agent", metavar="NAME", help="the agent sending (default claude-code)")

    rec = sub.add_parser("reconcile", help="wire `ways hook sensors` into Claude Code settings")
    rec.add_argument("--agent", metavar="NAME", default="claude-code", help="the agent to wire")
    rec.add_argument("--project", metavar="DIR", help="wire DIR's project settings instead")
    rec.add_argument("--remove", action="store_true", help="remove exactly what was added")
    rec.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    rec.add_argument("--settings", metavar="FILE", help=argparse.SUPPRESS)

    st = sub.add_parser("status", help="counters per rule and live dispatchers")
    st.add_argument("--json", action="store_true")

    demo = sub.add_parser("demo", help="a scripted session through the real hook and dispatcher")
    demo.add_argument("--keep", action="store_true", help="keep the throwaway install")

    settings = sub.add_parser("settings", help="get and set any sensor key")
    st_sub = settings.add_subparsers(dest="command", metavar="COMMAND")
    for name, helptext in (
        ("get", "a key's value"),
        ("unset", "remove a key at a layer"),
        ("help", "a key's type, default and meaning"),
    ):
        g = st_sub.add_parser(name, help=helptext)
        g.add_argument("key", metavar="KEY")
        g.add_argument("--project", metavar="DIR")
        g.add_argument("--json", action="store_true")
    sset = st_sub.add_parser("set", help="set a key in the sensor's file at a layer")
    sset.add_argument("key", metavar="KEY")
    sset.add_argument("value", metavar="VALUE", help="YAML: true, 5s, [a, b], {k: v}")
    sset.add_argument("--project", metavar="DIR", help="write DIR's project layer")
    slist = st_sub.add_parser("list", help="every key with its value and layer")
    slist.add_argument("--project", metavar="DIR")
    slist.add_argument("--json", action="store_true")

    sensors = sub.add_parser("sensors", help="list, lint and run sensors")
    ss = sensors.add_subparsers(dest="command", metavar="COMMAND")
    ls = ss.add_parser("list", help="every sensor and rule, with layer, target and flags")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--project", metavar="DIR")
    lint = ss.add_parser("lint", help="spec errors (exit 3) and warnings")
    lint.add_argument("--json", action="store_true")
    lint.add_argument("--project", metavar="DIR")
    lint.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to lint alone")
    ver = ss.add_parser("verify", help="check a chained file: exit 0 intact, 3 broken")
    ver.add_argument("file", metavar="FILE")
    ver.add_argument(
        "--rule", metavar="SENSOR/RULE", help="also check the tail against the stored chain head"
    )
    ver.add_argument("--json", action="store_true")
    for name, helptext in (
        ("copy", "copy a sensor to a new name (rules start disabled)"),
        ("rename", "rename a user or project sensor"),
    ):
        c = ss.add_parser(name, help=helptext)
        c.add_argument("source", metavar="SENSOR")
        c.add_argument("dest", metavar="NEW-NAME")
        c.add_argument("--project", metavar="DIR", help="the project layer of DIR")
    d = ss.add_parser("delete", help="delete a user or project sensor")
    d.add_argument("name", metavar="SENSOR")
    d.add_argument("--project", metavar="DIR")
    t = ss.add_parser("test", help="replay a recorded session through a rule, dispatch nothing")
    t.add_argument("rule", metavar="SENSOR/RULE")
    src = t.add_mutually_exclusive_group()
    src.add_argument("--session", metavar="ID")
    src.add_argument("--transcript", metavar="FILE")
    t.add_argument("--json", action="store_true")
    t.add_argument("--all", action="store_true", help="show every record, not the first 10")
    f = ss.add_parser("fire", help="send a test record through the real dispatch path")
    f.add_argument("target", metavar="SENSOR[/RULE]")
    f.add_argument("--section", required=True)
    f.add_argument("--input", metavar="FILE|-")
    f.add_argument("--dry-run", action="store_true")
    f.add_argument("--json", action="store_true")
    e = ss.add_parser("emit", help="hand a way_event record to a session's spool")
    e.add_argument("--section", required=True)
    e.add_argument("--session", required=True, metavar="ID")
    e.add_argument("--input", metavar="FILE|-")
    disp = ss.add_parser("dispatch", help="the per-session dispatcher (started by the hook)")
    disp.add_argument("--session", required=True)
    disp.add_argument("--idle", type=float, default=None, help=argparse.SUPPRESS)
    return p


def _handler(key: tuple[str, ...]):
    import importlib

    module, func = COMMANDS[key].split(":")
    return getattr(importlib.import_module(f"ways_sensors.commands.{module}"), func)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["hook", "sensors"]:
        from .hook import main as hook_main

        hook_main(argv[2:])  # leaves through _exit(0), whatever the arguments
    if argv == ["--version"]:
        from . import __version__

        print(f"ways {__version__}")
        return 0

    parser = build_parser()
    args = parser.parse_args(argv)
    key = tuple(k for k in (args.group, getattr(args, "command", None)) if k)
    if key not in COMMANDS:
        target = parser
        if args.group in ("sensors", "settings"):
            target = parser._subparsers._group_actions[0].choices[args.group]
        target.print_help(sys.stderr)
        return 2

    from .errors import WaysError

    try:
        return int(_handler(key)(args) or 0)
    except WaysError as exc:
        line = f"ways: {exc.message}"
        if exc.hint:
            line += f"; {exc.hint}"
        print(line, file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
