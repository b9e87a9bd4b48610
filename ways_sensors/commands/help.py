"""The words of `--help`: one wording per option, and each command's example and exit codes.

cli.py builds the argparse tree; `finish(parser)` then walks it once: an option with no
help of its own gets OPTION_HELP's (so `--json`, `--project` and `--session` read the
same in every command), and each command's help ends with its EXAMPLES entry: one
example and its exit codes (errors.py names them). tests/test_help.py runs every
command's `--help` as a real process and fails for an option without text or a command
without an example, so a new command brings its own line here.
"""

from __future__ import annotations

import argparse

OPTION_HELP = {
    "--json": "print JSON for machines (a stable shape) instead of text",
    "--project": "the project folder DIR whose layers to use (default: $CLAUDE_PROJECT_DIR, "
    "else the current folder)",
    "--session": "a recorded session, by id (its session file's name without .jsonl)",
    "--transcript": "a recorded session, by the path of its session file (a transcript)",
    "--agent": "the agent whose payloads or session files these are: claude-code (the "
    "default), codex, gemini, cursor or copilot",
    "--section": "the record section, one of: {sections}",  # sections.SECTIONS
    "--input": "a JSON object from FILE, or from stdin with -: a hook payload as the agent "
    "sends it, or a bare `data` object (default: the agent's example for the section)",
    "--dry-run": "build and print the record(s), send nothing",
    "--pretty": "one short line per record (time, rule and number, section, summary) "
    "instead of its JSON",
    "--event": "which record of the replayed session: N, counted from 1 as `ways sensors "
    "test` numbers them (a delivered file's `seq` numbers the live session, which can hold "
    "records a replay cannot rebuild)",
}
USAGE, INVALID = "2 bad arguments, or no such sensor or rule", "3 rejected by the spec"
FOUND = "0 found; 1 nothing found, or no store yet; 2 bad arguments; 3 not a session store"
# (command words) -> (one example, its exit codes)
EXAMPLES: dict[tuple[str, ...], tuple[str, str]] = {
    ("hook",): (
        'echo \'{"hook_event_name": "SessionStart", "session_id": "s1"}\' | ways hook sensors',
        "always 0; it prints nothing on stdout (the agent reads it)",
    ),
    ("reconcile",): (
        "ways reconcile --agent all",
        "0 wired or already wired; 2 bad arguments, or no such agent; 5 the settings file "
        "could not be written, or is not one ways can edit (left as it was)",
    ),
    ("status",): (
        "ways status --json",
        "0 healthy; 6 an enabled sensor file is refused, or a rule is gone while a session "
        "runs; 8 dead letters wait, or a consumer owed records has failed longer than "
        "--threshold (docs/status.md)",
    ),
    ("deadletters",): ("ways deadletters list", f"0; {USAGE}"),
    ("deadletters", "list"): ("ways deadletters list remote/prompts --json", f"0; {USAGE}"),
    ("deadletters", "show"): ("ways deadletters show remote/prompts --session S", f"0; {USAGE}"),
    ("deadletters", "replay"): (
        "ways deadletters replay remote/prompts",
        f"0 every selected record delivered (and removed); {USAGE}, or the rule is gone; "
        "7 one was not accepted (it and those after it kept); "
        "10 sent over UDP, unconfirmed, all kept",
    ),
    ("deadletters", "drop"): ("ways deadletters drop remote/prompts --session S", f"0; {USAGE}"),
    ("keys",): ("ways keys show", "0"),
    ("keys", "show"): ("ways keys show --json", "0; 5 the state root cannot be written"),
    ("keys", "chain"): ("ways keys chain > key-certificates.txt", "0"),
    ("demo",): ("ways demo", "0 the scripted session passed; 1 it did not"),
    ("settings",): ("ways settings list", f"0; {USAGE}"),
    ("settings", "get"): (
        "ways settings get ways.sensors.audit.rules.all.enabled",
        f"0; {USAGE}",
    ),
    ("settings", "set"): (
        "ways settings set ways.sensors.audit.rules.all.timeout 5s",
        f"0 written; {USAGE}; {INVALID}; 4 written but a higher layer decides; 5 could not write",
    ),
    ("settings", "unset"): (
        "ways settings unset ways.sensors.audit.rules.all.timeout",
        f"0; {USAGE}; {INVALID}; 5 could not write",
    ),
    ("settings", "help"): ("ways settings help ways.dispatch_idle_seconds", f"0; {USAGE}"),
    ("settings", "list"): ("ways settings list --json", "0"),
    ("sensors",): ("ways sensors list", f"0; {USAGE}"),
    ("sensors", "list"): ("ways sensors list --json", "0"),
    ("sensors", "lint"): ("ways sensors lint ./my-sensor.yaml", "0 no errors; 3 errors"),
    ("sensors", "verify"): (
        "ways sensors verify ~/audit/*.jsonl --rule audit/all",
        "0 intact; 2 bad arguments, or no such rule; 3 broken",
    ),
    ("sensors", "copy"): ("ways sensors copy audit my-audit", f"0; {USAGE}; 5 could not write"),
    ("sensors", "rename"): ("ways sensors rename my-audit team", f"0; {USAGE}; 5 could not write"),
    ("sensors", "delete"): ("ways sensors delete team", f"0; {USAGE}; 5 could not write"),
    ("sensors", "test"): ("ways sensors test audit/all --all", f"0; {USAGE}"),
    ("sensors", "fire"): (
        "ways sensors fire audit/all --section tool_call",
        f"0 every record delivered; {USAGE}; 7 a record was refused or timed out; "
        "10 a record was only sent, unconfirmed (syslog over UDP has no acknowledgement)",
    ),
    ("sensors", "emit"): (
        'echo \'{"kind": "fired", "way": "deploy"}\' | ways sensors emit '
        "--section way_event --session S --input -",
        f"0 handed to the spool; {USAGE}",
    ),
    ("sensors", "explain"): (
        "ways sensors explain payload.json",
        f"0 whatever the verdicts; {USAGE}, or the payload is not one",
    ),
    ("sensors", "tap"): (
        "ways sensors tap audit/all --pretty",
        f"0 at Ctrl-C; {USAGE}",
    ),
    ("sensors", "tui"): ("ways sensors tui", "0; 2 the tui extra is not installed"),
    ("sensors", "dispatch"): ("ways sensors dispatch -- SESSION_ID", f"0; {USAGE}"),
    ("mcp",): ("claude mcp add ways -- ways mcp", "0 when its stdin closes"),
    ("sessions",): ("ways sessions search 'git push'", f"0; {USAGE}"),
    ("sessions", "list"): ("ways sessions list --agent codex --since 2026-12-01", FOUND),
    ("sessions", "show"): ("ways sessions show SESSION_ID --json", FOUND),
    ("sessions", "search"): ("ways sessions search 'rm -rf' --tool-kind shell", FOUND),
    ("sessions", "import"): (
        "ways sessions import --agent codex",
        "0 imported (or nothing new); 1 no session file found; 2 bad arguments, or an "
        "agent without session files; 3 not a session store",
    ),
    ("sessions", "replay"): (
        "ways sessions replay SESSION_ID --html session.html",
        f"{FOUND}; 5 the page could not be written",
    ),
}


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands(
    p: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command words, parser) of the tree under `p` (not `p` itself)."""
    out = []
    for name, sub in _subparsers(p).items():
        out.append(((*words, name), sub))
        out += commands(sub, (*words, name))
    return out


def finish(parser: argparse.ArgumentParser) -> None:
    """Common option help where an option has none, --json worded once, and an epilog."""
    for words, sub in commands(parser):
        for action in sub._actions:
            for opt in action.option_strings:
                if opt in OPTION_HELP and (action.help is None or opt == "--json"):
                    action.help = OPTION_HELP[opt]
                    if "{sections}" in action.help:  # sections.py: not spec.py's imports
                        from ..config.sections import SECTIONS

                        action.help = action.help.format(sections=", ".join(SECTIONS))
        entry = EXAMPLES.get(words)
        if entry:
            example, codes = entry
            sub.epilog = f"example:\n  {example}\n\nexit codes: {codes}"
            sub.formatter_class = argparse.RawDescriptionHelpFormatter
