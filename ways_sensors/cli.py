"""The `ways` command: one argparse tree, each command a function returning an exit code.

`ways hook sensors` is routed before argparse is even imported (it is the hot path),
`ways --version` prints without importing anything else, and the forms that start a
dispatcher are read without argparse too (commands/dispatch.py: its start is part of
every drain). Every other command's module is imported only when that command is
chosen (the table below, as pip does); the argparse tree is cliparser.py's. Errors
cross one boundary here (as in pre-commit's error_handler.py): a WaysError becomes one
line on stderr, naming the next step when there is one, and its exit code; any other
exception becomes one line naming the command and `<state>/errors.log`, which holds
the traceback, and exits UNEXPECTED; Ctrl-C exits 130 and a closed stdout 141, both
quietly (the codes are named in errors.py). The hook is routed before the boundary:
it swallows everything itself and always exits 0.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

# (group, command) -> "module:function" under ways_sensors.commands
COMMANDS = {
    ("reconcile",): "reconcile:run",
    ("status",): "status:run",
    ("demo",): "demo:run",
    ("deadletters", "list"): "deadletters:cmd_list",
    ("deadletters", "show"): "deadletters:cmd_show",
    ("deadletters", "replay"): "deadletters:cmd_replay",
    ("deadletters", "drop"): "deadletters:cmd_drop",
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
    ("sensors", "tui"): "sensors_tui:run",
    ("keys", "show"): "keys:show",
    ("keys", "chain"): "keys:chain",
    ("sensors", "explain"): "sensors_explain:run",
    ("sensors", "tap"): "sensors_tap:run",
    ("mcp",): "mcp:run",
    ("sessions", "list"): "sessions:list_",
    ("sessions", "show"): "sessions:show",
    ("sessions", "search"): "sessions:search",
    ("sessions", "replay"): "sessions:replay",
    ("sessions", "import"): "sessions:import_",
    ("settings", "get"): "settings_cmd:cmd_get",
    ("settings", "set"): "settings_cmd:cmd_set",
    ("settings", "unset"): "settings_cmd:cmd_unset",
    ("settings", "help"): "settings_cmd:cmd_help",
    ("settings", "list"): "settings_cmd:cmd_list",
}
GROUPS = frozenset(k[0] for k in COMMANDS) | {"hook"}


def _handler(key: tuple[str, ...]) -> Callable[[argparse.Namespace], int | None]:
    import importlib

    module, func = COMMANDS[key].split(":")
    handler: Callable[[argparse.Namespace], int | None] = getattr(
        importlib.import_module(f"ways_sensors.commands.{module}"), func
    )
    return handler


RAW_OUTPUT = {("sensors", "tui"), ("sensors", "dispatch"), ("mcp",)}  # a screen; none; JSON-RPC


def _escape_output() -> None:
    """Every human output goes through table.Escaping: a control character from a
    sensor file (a cloned repository's) reaches the terminal as text, never as a
    command. The tab escapes its own cells (tui/rows.py)."""
    from .services.table import Escaping

    if not isinstance(sys.stdout, Escaping):
        sys.stdout = Escaping(sys.stdout)
    if not isinstance(sys.stderr, Escaping):
        sys.stderr = Escaping(sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["hook", "sensors"]:
        if "--help" in argv or "-h" in argv:  # a person asking: usage on stderr, exit 0
            _hook_usage()
        from .hook import main as hook_main

        hook_main(argv[2:])  # leaves through _exit(0), whatever the arguments; never
        # through the boundary below
    if argv == ["--version"]:
        from . import __version__

        print(f"ways {__version__}")
        return 0
    from . import errors

    command = "ways"
    try:
        if argv[:2] == ["sensors", "dispatch"]:  # the hook's dispatcher: a drain's start
            from .commands import dispatch

            quick = dispatch.quick_args(argv[2:])  # None: a form argparse reads (and explains)
            if quick is not None:
                command = "sensors dispatch"
                return dispatch.run(quick)
        first = argv[0] if argv and not argv[0].startswith("-") else None
        from .commands.parser import build_parser, group_parser

        parser = build_parser(first if first in GROUPS else None)
        args = parser.parse_args(argv)
        key = tuple(k for k in (args.group, getattr(args, "command", None)) if k)
        command = " ".join(key) or command
        if key not in COMMANDS:
            group_parser(parser, args.group).print_help(sys.stderr)
            return errors.USAGE
        if key not in RAW_OUTPUT:
            _escape_output()
        code = int(_handler(key)(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary
        return code
    except errors.WaysError as exc:
        line = f"ways: {exc.message}"
        if exc.hint:
            line += f"; {exc.hint}"
        print(line, file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return errors.INTERRUPTED
    except BrokenPipeError:
        return _stdout_gone()
    except Exception as exc:  # the boundary: one line here, the traceback in errors.log
        from .state.secure import UnsafeState

        if isinstance(exc, UnsafeState):  # a state path refused (secure.py): say which, why
            print(f"ways: {exc.message}", file=sys.stderr)
            return errors.WRITE_FAILED
        return _unexpected(command, exc)


def _hook_usage() -> None:
    """`ways hook sensors --help`: the hook's usage on stderr (its stdout belongs to the
    agent, which reads it), then exit 0, as the hook always does."""
    from .commands.parser import build_parser, group_parser

    parser = build_parser()
    hook = group_parser(parser, "hook")
    hook.prog = "ways hook sensors"
    sys.stderr.write(hook.format_help())
    sys.stderr.flush()
    raise SystemExit(0)


def _stdout_gone() -> int:
    """The reader of stdout left (`ways ... | head`): exit quietly. Point fd 1 at
    /dev/null first, or Python's last flush at exit prints its own complaint. A
    BrokenPipeError is stdout's: the one other pipe writer (targets/command.py)
    catches its own."""
    import os

    from . import errors

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return errors.BROKEN_PIPE


def _unexpected(command: str, exc: Exception) -> int:
    """One line on stderr naming the command, the error and where its traceback went
    (errorlog.py), counted content-free in events.log; never the traceback itself."""
    from . import errors
    from .state import errorlog, events

    events.log("cli.unexpected", command=command, error=type(exc).__name__)
    what = type(exc).__name__
    detail = " ".join(str(exc).split())[:200]
    if detail:
        what += f": {detail}"
    try:
        where = "details in " + errorlog.log_unexpected(command, exc)
    except Exception as log_exc:  # the state root itself is broken: say so, still one line
        where = f"its details could not be logged ({type(log_exc).__name__}: {log_exc})"
    try:
        print(f"ways: unexpected error in {command!r} ({what}); {where}", file=sys.stderr)
    except Exception:
        pass
    return errors.UNEXPECTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
