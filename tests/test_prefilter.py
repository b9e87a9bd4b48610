"""The blocking path decides `where` on the payload first (prefilter.py): a rule whose
`where` cannot hold costs the hook what the event no rule wants costs, and the answer
"cannot" is never wrong."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from ways_sensors import agents, index, prefilter
from ways_sensors.config.conditions import compile_where
from ways_sensors.hook import string_field
from ways_sensors.records import envelope

from .conftest import payload
from .helpers import FORBIDDEN, appending_consumer, modules_on_path

FIXTURES = Path(__file__).parent / "fixtures"
AGENT_OF = {
    "claude-code-2.1.332": "claude-code",
    "codex-0.169.0": "codex",
    "gemini-cli-0.61.0": "gemini",
    "cursor-docs": "cursor",
    "copilot-docs": "copilot",
}


def recorded() -> list[tuple[str, str, dict, bytes]]:
    """(agent, event, payload, raw bytes) of every recorded hook payload."""
    out = []
    for folder, agent in AGENT_OF.items():
        face = index.AGENTS[agent]
        for line in (FIXTURES / folder / "hooks.jsonl").read_text().splitlines():
            entry = json.loads(line)
            p = entry.get("payload", entry)
            raw = json.dumps(p).encode()
            event = string_field(raw, face.EVENT_FIELD) or entry.get("event")
            if event:
                out.append((agent, event, p, raw))
    return out


def built(agent: str, event: str, p: dict) -> list[dict]:
    builder = agents.adapter(agent).new_builder(transcript=False)
    return [envelope(d, None, "s", "/p") for d in builder.build(event, p, 1)]


def test_every_verbatim_claim_of_the_faces_holds_on_the_recorded_payloads():
    checked = set()
    for agent, event, p, raw in recorded():
        copies = index.AGENTS[agent].VERBATIM.get(event)
        if copies is None:
            continue
        for rec in built(agent, event, p):
            if rec["section"] not in prefilter.TOOL_SECTIONS:
                continue
            for path, key in copies.items():
                head, _, rest = path.partition(".")
                assert rec[head][rest] == string_field(raw, key), (agent, event, path)
                checked.add((agent, event))
    # every agent's claims met a real payload
    assert {a for a, _ in checked} == set(AGENT_OF.values()), checked


WHERES = [
    {"data.tool_name": "Bash"},
    {"data.tool_name": "Read"},
    {"data.tool_name": {"not": "Bash"}},
    {"data.tool_name": {"in": ["Read", "Write", 3]}},
    {"data.tool_name": {"in": ["Bash", "shell", "run_shell_command", "bash", "Shell"]}},
    {"data.tool_name": {"contains": "ash"}},
    {"data.tool_name": {"equals": "grep"}},
    {"data.tool_name": "B*"},  # a glob: not decided on the payload
    {"data.tool_name": "Read", "data.input.command": {"contains": "ls"}},
    {"data.tool_name": 5},
    {"data.input.command": {"matches": "^ls"}},
    {"agent_type": "main"},
    {},
]


def test_cannot_is_never_wrong_and_is_said_for_tool_calls():
    """For every recorded payload, rule and `match`: when the prefilter says no record
    can match, the full path (the builder, then `where`) agrees."""
    said_no = 0
    for (agent, event, p, raw), where, match, sections in itertools.product(
        recorded(), WHERES, ("all", "any"), (["tool_call"], ["tool_call", "tool_result"])
    ):
        face = index.AGENTS[agent]
        event_sections = face.sections_for(event, lambda k, raw=raw: string_field(raw, k))
        line = prefilter.line_for(sections, where, match)

        def field(key: bytes, raw: bytes = raw) -> str | None:
            return string_field(raw, key)

        maybe = prefilter.may_match([line], face.VERBATIM.get(event), event_sections, field)
        test = compile_where(where, match)
        hits = [r for r in built(agent, event, p) if r["section"] in sections and test(r)]
        if not maybe:
            said_no += 1
            assert not hits, (agent, event, where, match)
    assert said_no > 50  # the common case is decided without building anything


def test_a_rule_of_another_section_or_an_undecided_one_leaves_it_to_the_full_path():
    raw = json.dumps({"tool_name": "Read"}).encode()

    def field(key: bytes) -> str | None:
        return string_field(raw, key)

    copies = {"data.tool_name": b"tool_name"}
    bash = prefilter.line_for(["tool_call"], {"data.tool_name": "Bash"}, "all")
    assert not prefilter.may_match([bash], copies, ["tool_call", "permission"], field)
    perm = prefilter.line_for(["permission"], {"data.tool_name": "Bash"}, "all")
    assert prefilter.may_match([perm], copies, ["tool_call", "permission"], field)
    assert prefilter.may_match([bash], None, ["tool_call"], field)  # nothing copied as is
    odd = prefilter.line_for(["tool_call"], {"data.tool_name": "a b\u00e9:.\ud800"}, "all")
    assert not prefilter.may_match([odd], copies, ["tool_call"], field)
    assert prefilter.may_match(
        [odd], copies, ["tool_call"], lambda k: "a b\u00e9:.\ud800" if k == b"tool_name" else None
    )


def blocking_sensor(where: str, out: Path) -> str:
    return (
        "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    where: {where}\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


def test_a_blocking_rule_whose_where_cannot_hold_loads_what_no_rule_loads(install, tmp_path):
    """The recorded PreToolUse is a Bash call: a blocking rule on Read adds one module of
    ours (this one) to the event no rule wants, and builds, masks and sends nothing."""
    out = tmp_path / "b.jsonl"
    install.sensor("blk", blocking_sensor("{data.tool_name: Read}", out))
    pre = payload("PreToolUse")
    r = install.hook(pre)  # builds the index
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    mods = modules_on_path(install, tmp_path, json.dumps(pre).encode())
    assert not (FORBIDDEN & mods), FORBIDDEN & mods
    ours = {m for m in mods if m.startswith("ways_sensors")}
    assert ours == {
        "ways_sensors",
        "ways_sensors.hook",
        "ways_sensors.roots",
        "ways_sensors.index",
        "ways_sensors.prefilter",
    }
    assert not out.exists()
    install.sensor("blk", blocking_sensor("{data.tool_name: Bash}", out))  # now it holds
    r = install.hook(pre)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    [rec] = [json.loads(x) for x in out.read_text().splitlines()]
    assert rec["data"]["tool_name"] == "Bash" and rec["rule_seq"] == 1


def test_a_blocking_rule_that_holds_loads_its_own_target_kind_only(install, tmp_path):
    """A matching blocking rule's hook reads the rule from the index's plain form: it
    loads neither spec.py (whose Dispatch imports every target kind), nor the sensor
    files' YAML, nor any target kind but the rule's own; and the record still goes
    out numbered, masked and chained, and a second one chains to it."""
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n    chain: true\n"
        f"    where: {{data.tool_name: Bash}}\n    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    pre = payload("PreToolUse")
    r = install.hook(pre)  # builds the index (that run loads the spec and YAML)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    mods = modules_on_path(install, tmp_path, json.dumps(pre).encode())
    assert "ways_sensors.targets.file" in mods  # the rule's kind: it did deliver
    unwanted = {
        "ways_sensors.config.spec",
        "ways_sensors.config.specdecode",
        "ways_sensors.config.layers",
        "yaml",
    }
    kinds = ("http", "command", "otlp", "syslog", "store")
    unwanted |= {f"ways_sensors.targets.{k}" for k in kinds} | {"ways_sensors.store", "sqlite3"}
    # nor msgspec (the file kind's Spec is read as plain attributes; json writes the
    # line), nor site-packages at all: the largest costs of a matching rule before
    unwanted |= {"msgspec", "site", "ways_sensors.targets.file_spec"}
    unwanted |= {"dataclasses", "inspect"}  # the path's value classes are plain.py's
    unwanted |= {"hashlib", "_hashlib", "hmac", "random"}  # no OpenSSL: sha.light()
    unwanted |= {"typing"}  # Protocols and aliases for the type checker only
    unwanted |= {"re", "json", "threading", "contextlib"}  # regex.py, jsoncore.py
    assert not (unwanted & mods), unwanted & mods
    first, second = [json.loads(x) for x in out.read_text().splitlines()]
    assert [first["rule_seq"], second["rule_seq"]] == [1, 2]
    assert second["chain"]["prev"] == first["chain"]["hash"]


def test_a_blocking_command_rule_runs_its_command_without_subprocess_or_typing(install, tmp_path):
    """The blocking path's imports are what a matching rule costs (bench/RESULTS.md,
    Blocking path cost): a command rule's hook forks and execs through spawn.py, with
    neither subprocess (nor its locale and selectors) nor typing nor OpenSSL nor re
    nor json loaded, and the command still gets the masked, numbered record on its
    stdin, its secret masked."""
    script, out = appending_consumer(tmp_path)
    install.sensor(
        "blk",
        "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    where: {{data.tool_name: Bash}}\n    dispatch: {{command: {{argv: ['{script}']}}}}\n",
    )
    pre = payload("PreToolUse")
    secret = "abcdefghijklmnopqrstuvwxyz012345"
    pre["tool_input"] = {
        **pre["tool_input"],
        "command": f"curl -H 'Authorization: Bearer {secret}'",
    }
    r = install.hook(pre)  # builds the index and regex.py's cache
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    mods = modules_on_path(install, tmp_path, json.dumps(pre).encode())
    assert {"ways_sensors.targets.command", "ways_sensors.targets.spawn"} <= mods
    unwanted = {"subprocess", "locale", "selectors", "typing", "_hashlib", "hashlib", "random"}
    unwanted |= {"dataclasses", "inspect", "msgspec", "site", "ways_sensors.config.spec"}
    # nor re (masking's patterns come from regex.py's cache, filled by the run above)
    # and what it brings, nor json (jsoncore.py), threading, contextlib or signal.py
    unwanted |= {"re", "enum", "functools", "collections", "json", "threading"}
    unwanted |= {"contextlib", "signal", "fnmatch"}
    unwanted |= {"ctypes", "struct"}  # prctl through _ctypes alone (targets/command.py)
    assert not (unwanted & mods), unwanted & mods
    first, second = [json.loads(x) for x in out.read_text().splitlines()]
    assert [first["rule_seq"], second["rule_seq"]] == [1, 2]
    assert first["data"]["tool_name"] == "Bash"
    assert secret not in out.read_text()  # masked by re's patterns, then by the cache's
    assert first["data"] == second["data"] and "[REDACTED:" in json.dumps(second["data"])


def test_a_blocking_rule_that_needs_installed_packages_loads_them_when_it_fires(install, tmp_path):
    """The hook runs with -S and a matching blocking rule loads site-packages only for
    what needs them: RE2 for a `matches` condition, msgspec for a mapped format (OCSF).
    Such a rule still delivers through the real hook, and its `where` is still applied."""
    out = tmp_path / "b.jsonl"
    pre = payload("PreToolUse")
    command = pre["tool_input"]["command"]
    install.sensor(
        "blk",
        "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    where: {{data.input.command: {{matches: '^{command[:3]}'}}}}\n"
        f"    dispatch: {{file: {{path: '{out}', format: ocsf}}}}\n",
    )
    r = install.hook(pre)  # builds the index
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    mods = modules_on_path(install, tmp_path, json.dumps(pre).encode())
    assert {"site", "re2", "msgspec", "ways_sensors.formats"} <= mods
    other = {**pre, "tool_input": {**pre["tool_input"], "command": "x" + command}}
    r = install.hook(other)  # `matches` does not hold: nothing sent
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    docs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(docs) == 2 and all("class_uid" in d for d in docs)  # OCSF, not our record
    assert not (install.state_root / "events.log").exists()  # nothing failed
