"""The `ways` command's argparse tree (cli.py routes and runs it): every group's and
command's arguments and help, built only for the group a run needs.

Building every parser is a large part of a command's start (bench/RESULTS.md,
Everyday commands), so `build_parser(only)` fills in one group and leaves the others
named but empty, and argparse's formatter is sized without importing shutil.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    import argparse
    from typing import Any


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole tree; with `only`, the arguments of that group alone (the others are
    named, for the help, but left empty: the module docstring says why)."""
    import argparse

    from .. import __version__
    from ..index import DEFAULT

    class Formatter(argparse.HelpFormatter):
        """argparse's formatter, sized without `shutil` (which argparse imports for every
        parser it builds, and which pulls in bz2 and lzma: bench/RESULTS.md, Everyday
        commands); help text is still wrapped to the terminal."""

        def __init__(self, prog: str, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("width") is None and len(args) < 3:
                kwargs["width"] = _columns() - 2  # what argparse takes from shutil's
            super().__init__(prog, *args, **kwargs)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", Formatter)
            super().__init__(*args, **kwargs)

    p = Parser(
        prog="ways",
        description="ways sensors: an independent, tamper-evident record of what coding "
        "agents did (Claude Code, Codex CLI, Gemini CLI, Cursor, Copilot CLI), dispatched "
        "to your consumers.",
    )
    p.add_argument("--version", action="version", version=f"ways {__version__}")
    sub = p.add_subparsers(dest="group", metavar="COMMAND")

    def group(name: str, **kwargs: Any) -> Any:
        parser = sub.add_parser(name, **kwargs)
        return parser if only in (None, name) else _Unbuilt()

    from ..agents import names

    agent_names = ", ".join(names())
    hook = group("hook", help="the hook entry an agent runs (wired by reconcile)")
    hook.add_argument("which", choices=["sensors"], help="the hook to run: sensors")
    hook.add_argument(
        "--agent", metavar="NAME", help=f"the agent sending: {agent_names} (default {DEFAULT})"
    )
    hook.add_argument("--event", metavar="NAME", help="the event, for payloads naming none")

    rec = group("reconcile", help="wire `ways hook sensors` into an agent's settings")
    rec.add_argument(
        "--agent",
        metavar="NAME",
        default=DEFAULT,
        help=f"the agent to wire: {agent_names} (default {DEFAULT}), or `all`",
    )
    rec.add_argument("--project", metavar="DIR", help="wire DIR's project settings instead")
    rec.add_argument("--remove", action="store_true", help="remove exactly what was added")
    rec.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    rec.add_argument("--settings", metavar="FILE", help=argparse.SUPPRESS)
    rec.add_argument(
        "--managed", action="store_true", help="wire the system-wide (administrator) files"
    )
    rec.add_argument("--root", metavar="DIR", help="with --managed: stage the files under DIR")

    st = group("status", help="counters and health per rule, and live dispatchers")
    st.add_argument("--json", action="store_true")
    st.add_argument(
        "--prometheus", action="store_true", help="print the metrics textfile's text instead"
    )
    st.add_argument(
        "--threshold",
        metavar="SECONDS",
        type=float,
        default=300.0,  # services/health.py's THRESHOLD_S
        help="how long a consumer may fail while records wait for it before the rule is "
        "unhealthy (exit 8; default 300)",
    )

    dead = group("deadletters", help="records refused for good: list, show, replay, drop")
    ds = dead.add_subparsers(dest="command", metavar="COMMAND")
    for name, helptext in (
        ("list", "each rule's parked records: how many, sessions, when, why"),
        ("show", "the parked records themselves, a JSON line each, oldest first"),
        ("replay", "send them through the rule's current target, in order; keep what fails"),
        ("drop", "remove them, delivered nowhere (counted in events.log)"),
    ):
        dp = ds.add_parser(name, help=helptext)
        dp.add_argument("rule", nargs="?", metavar="SENSOR/RULE", help="one rule (default: all)")
        dp.add_argument("--session", metavar="ID", help="only the records of this session")
        dp.add_argument("--json", action="store_true")

    demo = group("demo", help="a scripted session through the real hook and dispatcher")
    demo.add_argument("--keep", action="store_true", help="keep the throwaway install")

    keys = group("keys", help="the signing keys' root of trust (signed checkpoints)")
    ks = keys.add_subparsers(dest="command", metavar="COMMAND")
    kshow = ks.add_parser("show", help="the root public key and its C2SP verifier key, to pin")
    kshow.add_argument("--json", action="store_true")
    ks.add_parser("chain", help="the key certificates, for `ways sensors verify --checkpoints`")

    sessions = group("sessions", help="the session store read back (docs/sessions.md)")
    _sessions_parsers(sessions.add_subparsers(dest="command", metavar="COMMAND"))

    mcp = group("mcp", help="the session store for the agent itself, over MCP (stdio)")
    mcp.add_argument("--store", metavar="PATH", help="another store than the data root's")

    settings = group("settings", help="get and set any sensor key")
    st_sub = settings.add_subparsers(dest="command", metavar="COMMAND")
    for name, helptext in (
        ("get", "a key's value"),
        ("unset", "remove a key at a layer"),
        ("help", "a key's type, default and meaning"),
    ):
        g = st_sub.add_parser(name, help=helptext)
        g.add_argument("key", metavar="KEY", help=KEY_HELP)
        g.add_argument("--project", metavar="DIR")
        g.add_argument("--json", action="store_true")
    sset = st_sub.add_parser("set", help="set a key in the sensor's file at a layer")
    sset.add_argument("key", metavar="KEY", help=KEY_HELP)
    sset.add_argument("value", metavar="VALUE", help="YAML: true, 5s, [a, b], {k: v}")
    sset.add_argument("--project", metavar="DIR", help="write DIR's project layer")
    sset.add_argument("--json", action="store_true")
    slist = st_sub.add_parser("list", help="every key with its value and layer")
    slist.add_argument("--project", metavar="DIR")
    slist.add_argument("--json", action="store_true")

    sensors = group("sensors", help="list, lint and run sensors")
    ss = sensors.add_subparsers(dest="command", metavar="COMMAND")
    ls = ss.add_parser("list", help="every sensor and rule, with layer, target and flags")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--project", metavar="DIR")
    lint = ss.add_parser("lint", help="spec errors (exit 3) and warnings")
    lint.add_argument("--json", action="store_true")
    lint.add_argument("--project", metavar="DIR")
    lint.add_argument(
        "--check-targets",
        action="store_true",
        help="also check each rule's consumer from here: a file target's folder writable, "
        "a command executable, an http or otlp endpoint accepting a connection (nothing sent)",
    )
    lint.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to lint alone (default: "
        "every layer of the project, and config.yaml)",
    )
    ver = ss.add_parser("verify", help="check chained files: exit 0 intact, 3 broken")
    ver.add_argument(
        "files", nargs="*", metavar="FILE", help="files or folders (one chain may span several)"
    )
    ver.add_argument(
        "--rule",
        metavar="SENSOR/RULE",
        help="also check each tail against the stored chain head; alone: every file it wrote",
    )
    ver.add_argument(
        "--key",
        metavar="ROOTKEY",
        help="check signed checkpoints: the root verifier key, or a file",
    )
    ver.add_argument(
        "--checkpoints", metavar="FILE", help="checkpoints a witness or another consumer received"
    )
    ver.add_argument(
        "--witness-key", metavar="KEY", help="the latest checkpoints must be cosigned by it"
    )
    ver.add_argument(
        "--all-present",
        action="store_true",
        help="a session the checkpoints sign with no record in the files is a break",
    )
    ver.add_argument(
        "--machine-log",
        metavar="DIR",
        help="a session the machine log (its tiles) holds with no record in the files is a break",
    )
    ver.add_argument(
        "--machine-key", metavar="KEY", help="the machine log's verifier key (`ways keys show`)"
    )
    ver.add_argument("--json", action="store_true")
    for name, helptext in (
        ("copy", "copy a sensor to a new name (rules start disabled)"),
        ("rename", "rename a user or project sensor"),
    ):
        c = ss.add_parser(name, help=helptext)
        c.add_argument("source", metavar="SENSOR", help="the sensor's name")
        c.add_argument("dest", metavar="NEW-NAME", help="the new sensor's name")
        c.add_argument("--project", metavar="DIR", help="the project layer of DIR")
        c.add_argument("--json", action="store_true")
    d = ss.add_parser("delete", help="delete a user or project sensor")
    d.add_argument("name", metavar="SENSOR", help="the sensor's name")
    d.add_argument("--project", metavar="DIR")
    d.add_argument("--json", action="store_true")
    t = ss.add_parser("test", help="replay a recorded session through a rule, dispatch nothing")
    t.add_argument("rule", metavar="SENSOR/RULE", help="the rule to replay the session through")
    src = t.add_mutually_exclusive_group()
    src.add_argument("--session", metavar="ID")
    src.add_argument("--transcript", metavar="FILE")
    t.add_argument("--agent", metavar="NAME", help="whose session file (default: detected)")
    t.add_argument("--json", action="store_true")
    t.add_argument("--all", action="store_true", help="show every record, not the first 10")
    f = ss.add_parser("fire", help="send a test record through the real dispatch path")
    f.add_argument(
        "target",
        metavar="SENSOR[/RULE]",
        help="a rule, or every rule of a sensor that selects the section",
    )
    f.add_argument("--section", required=True)
    f.add_argument("--input", metavar="FILE|-")
    f.add_argument("--dry-run", action="store_true")
    f.add_argument(
        "--include-disabled", action="store_true", help="fire disabled rules too (else skipped)"
    )
    f.add_argument("--json", action="store_true")
    e = ss.add_parser("emit", help="hand a way_event record to a session's spool")
    e.add_argument("--section", required=True)
    e.add_argument("--session", required=True, metavar="ID")
    e.add_argument("--input", metavar="FILE|-")
    from ..services.tabkeys import TUI_KEYS

    ss.add_parser(
        "tui",
        help="the sensors tab: a terminal UI (the tui extra)",
        description="The sensors tab: every rule with its live counts. Keys:\n\n" + TUI_KEYS,
    )
    x = ss.add_parser(
        "explain", help="for every rule: would it receive this payload's record, and why not"
    )
    x.add_argument(
        "payload",
        nargs="?",
        metavar="PAYLOAD",
        help="a hook payload as the agent sends it: a JSON file, or - for stdin",
    )
    xs = x.add_mutually_exclusive_group()
    xs.add_argument("--session", metavar="ID")
    xs.add_argument("--transcript", metavar="FILE")
    x.add_argument("--event", metavar="N", type=int)
    x.add_argument("--agent", metavar="NAME")
    x.add_argument("--json", action="store_true")
    tap = ss.add_parser("tap", help="print the records rules deliver, live, until Ctrl-C")
    tap.add_argument(
        "names", nargs="+", metavar="RULE|SENSOR", help="SENSOR/RULE, or a sensor for all its rules"
    )
    tap.add_argument("--pretty", action="store_true")
    tap.add_argument("--project", metavar="DIR")
    disp = ss.add_parser("dispatch", help="the per-session dispatcher (started by the hook)")
    disp.add_argument("session_id", nargs="?", metavar="ID", help="after --: ids may start with -")
    disp.add_argument("--session", metavar="ID", help="the session id (or give it after --)")
    disp.add_argument("--idle", type=float, default=None, help=argparse.SUPPRESS)
    disp.add_argument("--resume-owed", action="store_true", help=argparse.SUPPRESS)
    from .help import finish

    finish(p)
    return p


SESSION_FILTERS = (  # `ways sessions list|search`: store/query.py's Filters
    ("agent", "only this agent's: claude-code, codex, gemini, cursor or copilot"),
    ("project", "only this project folder's"),
    ("user", "only this user's (the user id of the records' identity)"),
    ("section", "only records of this section (list: sessions holding one)"),
    ("tool", "only this tool's records (Bash, Read, mcp__server__tool, ...)"),
    ("tool-kind", "only this kind of tool: shell, read, edit, write, search, web, mcp, agent"),
    ("rule", "only what this store rule delivered: SENSOR/RULE"),
    ("session", "only this session's records"),
    ("model", "only this model's records (list: sessions that used it)"),
    ("outcome", "a tool result's status, a permission's decision, a session's end reason"),
    ("since", "from this UTC time on: 2026-12-01, 2026-12-01T09:30"),
    ("until", "up to this UTC time, a date taking in its whole day"),
)


def _sessions_parsers(sub: Any) -> None:
    """`ways sessions list|show|search|replay` (commands/sessions.py)."""

    def store_args(p: Any) -> None:
        p.add_argument(
            "--store",
            metavar="PATH|URL",
            help="another store than the data root's; postgresql://... for a team store",
        )
        p.add_argument("--json", action="store_true")

    def filter_args(p: Any) -> None:
        for name, helptext in SESSION_FILTERS:
            p.add_argument(f"--{name}", metavar=name.split("-")[-1].upper(), help=helptext)
        imp = p.add_mutually_exclusive_group()
        imp.add_argument(
            "--imported", action="store_true", default=None, help="only imported sessions"
        )
        imp.add_argument("--live", dest="imported", action="store_false", help="only recorded live")
        p.add_argument("--limit", type=int, default=50, help="at most this many (0: all)")

    ls = sub.add_parser("list", help="sessions newest first")
    filter_args(ls)
    store_args(ls)
    sh = sub.add_parser("show", help="a session's timeline")
    sh.add_argument("sid", metavar="SESSION", help="the session id (ways sessions list)")
    store_args(sh)
    se = sub.add_parser("search", help="records holding a text, best first")
    se.add_argument("query", metavar="QUERY", help="a substring (case-insensitive)")
    filter_args(se)
    store_args(se)
    rp = sub.add_parser("replay", help="a session in the terminal, or as one HTML page")
    rp.add_argument("sid", metavar="SESSION", help="the session id (ways sessions list)")
    rp.add_argument("--html", metavar="FILE", help="write a self-contained page there")
    store_args(rp)
    im = sub.add_parser("import", help="the agents' own session files into the store")
    im.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="session files or folders (default: each agent's own folder)",
    )
    im.add_argument(
        "--agent",
        default="all",
        help="whose files: claude-code, codex, gemini, or all (the default)",
    )
    store_args(im)


KEY_HELP = "a settings key: ways.sensors.SENSOR.rules.RULE.FIELD, or a ways.* key of config.yaml"


class _Unbuilt:
    """A parser of a group this run does not need: every call builds nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size reads it: $COLUMNS, else stdout's
    terminal, else 80."""
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def group_parser(parser: argparse.ArgumentParser, group: str | None) -> argparse.ArgumentParser:
    """The parser of `ways GROUP` (for its help), else the top one."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and group in action.choices:
            found: argparse.ArgumentParser = action.choices[group]
            return found
    return parser
