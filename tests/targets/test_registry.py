"""The registry is the one list of target kinds: the spec, settings and messages follow it."""

from __future__ import annotations

import ast
import inspect
import threading

import msgspec
import pytest

from ways_sensors.config import settings
from ways_sensors.config.spec import Dispatch, SpecError, sensor_schema
from ways_sensors.config.specdecode import decode_rule
from ways_sensors.errors import UsageError
from ways_sensors.targets import STDLIB_KINDS, TARGETS, names

from ..conftest import REPO

EXAMPLES = {  # a minimal valid spec per kind: a new kind adds its line here
    "file": {"path": "/tmp/x"},
    "http": {"url": "http://127.0.0.1:1/x"},
    "command": {"argv": ["true"]},
    "otlp": {"endpoint": "http://127.0.0.1:4318"},
    "syslog": {"host": "127.0.0.1"},
    "store": {},
}


def test_every_kind_is_a_whole_room():
    for kind, t in TARGETS.items():
        assert issubclass(t.Spec, msgspec.Struct), kind
        fields = {f.name for f in msgspec.structs.fields(t.Spec)}
        assert set(t.SECRET_FIELDS) <= fields, kind
        assert list(inspect.signature(t.deliver).parameters) == [
            "spec",
            "batch",
            "ctx",
            "deadline",
        ], kind
        assert callable(t.destination) and callable(t.off_machine) and callable(t.close)
        assert list(inspect.signature(t.warnings).parameters) == ["spec", "at_least_once"]
        assert list(inspect.signature(t.unreachable).parameters) == ["spec", "timeout"]
        records, delay = t.BATCH_DEFAULT
        assert isinstance(records, int) and records >= 1 and delay >= 0, kind


def test_kinds_share_code_through_public_modules_only():
    """A kind imports the contract and the shared transport, never another kind (otlp
    once reached into http's private event loop and reader)."""
    for kind, t in TARGETS.items():
        for node in ast.walk(ast.parse(inspect.getsource(t))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = {node.module} if node.module else {a.name for a in node.names}
                assert not names & set(TARGETS), (kind, names)
                assert not any(a.name.startswith("_") for a in node.names), (kind, names)


def test_what_lint_and_listings_say_of_a_consumer_is_its_kinds_own():
    """A kind's warnings and reachability check live in its module: lint, `ways
    sensors list` and the tab name no kind (adding one touches its module, the
    registry, the schema and its test)."""
    for module in ("config/lint.py", "services/catalog.py", "services/status.py"):
        tree = ast.parse((REPO / "ways_sensors" / module).read_text())
        kinds = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in TARGETS
        }
        assert kinds <= {"file"}, (module, kinds)  # "file": a layer's name, not the kind
    for kind, t in TARGETS.items():
        spec = msgspec.convert(EXAMPLES[kind], t.Spec)
        assert t.warnings(spec, True) == [] or kind == "syslog", kind
    udp = msgspec.convert({"host": "127.0.0.1", "protocol": "udp"}, TARGETS["syslog"].Spec)
    [(message, where)] = TARGETS["syslog"].warnings(udp, True)
    assert where == ["protocol"] and "udp" in message
    assert TARGETS["syslog"].warnings(udp, False) == []
    args = msgspec.convert({"argv": ["nc", "--token", "hunter2hunter2"], "input": "args"},
                           TARGETS["command"].Spec)  # fmt: skip
    assert [w for _, w in TARGETS["command"].warnings(args, False)] == [["input"], ["argv", 2]]
    assert "hunter2" not in TARGETS["command"].destination(args)


def test_close_releases_the_threads_event_loop_and_a_later_attempt_makes_a_new_one():
    from ways_sensors.targets import Context, Item, transport

    loops = []

    def attempt() -> None:  # nobody listens on port 1: refused at once
        spec = TARGETS["http"].Spec(url="http://127.0.0.1:1/x")
        out = TARGETS["http"].deliver(spec, [Item({}, b"{}")], Context("s", "r"), 1e12)
        assert out.status == "retryable"
        loops.append(transport._local.loop)

    def one_shot() -> None:  # what `fire` does in the tab's worker thread
        attempt()
        TARGETS["http"].close()
        assert loops[-1].is_closed()
        attempt()
        assert not loops[-1].is_closed() and loops[-1] is not loops[0]
        TARGETS["otlp"].close()  # the same transport: the same loop
        assert loops[-1].is_closed()

    t = threading.Thread(target=one_shot)
    t.start()
    t.join(60)
    assert len(loops) == 2


def test_dispatch_has_one_field_per_kind_and_exactly_one_is_set():
    assert [f.name for f in msgspec.structs.fields(Dispatch)] == list(TARGETS)
    schema = sensor_schema()["$defs"]
    assert set(schema["Dispatch"]["properties"]) == set(TARGETS)
    for kind, t in TARGETS.items():
        assert t.Spec.__name__ in schema
        rule = decode_rule({"sections": ["tool_call"], "dispatch": {kind: EXAMPLES[kind]}})
        assert rule.dispatch.kind == kind and isinstance(rule.dispatch.target, t.Spec)
    with pytest.raises(SpecError, match=f"exactly one of {', '.join(TARGETS)}"):
        decode_rule({"sections": ["tool_call"], "dispatch": {}})
    with pytest.raises(SpecError, match=f"unknown target `kafka`: use {names()}"):
        decode_rule({"sections": ["tool_call"], "dispatch": {"kafka": {"x": 1}}})


def test_settings_keys_come_from_each_spec():
    for kind, t in TARGETS.items():
        for f in msgspec.structs.fields(t.Spec):
            key = settings.parse_key(f"ways.sensors.s.rules.r.dispatch.{kind}.{f.name}")
            assert key.path == ("rules", "r", "dispatch", kind, f.name)
    with pytest.raises(UsageError, match=f"use {names()}"):
        settings.parse_key("ways.sensors.s.rules.r.dispatch.kafka.url")


@pytest.mark.parametrize("kind", list(TARGETS))
def test_a_blocking_rule_s_plain_form_reads_back_as_the_rule(kind):
    """The hook reads a blocking rule from the index's plain form (no spec.py): for every
    kind it answers what the decoded rule answers, its consumer's Spec included."""
    import json

    from ways_sensors.config import rules
    from ways_sensors.config.indexbuild import plain
    from ways_sensors.targets.timing import batch_for

    rule = decode_rule(
        {
            "sections": ["tool_call"],
            "mode": "blocking",
            "timeout": "750ms",
            "delivery": "at_least_once",
            "fields": {"include": ["data"]},
            "batch": {"max_records": 3},
            "dispatch": {kind: EXAMPLES[kind]},
        }
    )
    back = rules._plain(json.loads(json.dumps(plain(rule))))
    assert back.dispatch.kind == kind
    spec = rule.dispatch.target
    every = {f: getattr(spec, f) for f in spec.__struct_fields__}
    assert {f: getattr(back.dispatch.target, f) for f in every} == every
    if kind not in STDLIB_KINDS:
        assert back.dispatch.target == spec  # the Spec itself, decoded
    assert (back.timeout_s, back.delivery, back.redact, back.chain) == (
        0.75,
        "at_least_once",
        "default",
        False,
    )
    assert back.fields is not None and list(back.fields.include) == ["data"]
    assert batch_for(kind, back.batch) == batch_for(kind, rule.batch)
    assert batch_for(kind, back.batch)[0] == 3


def test_a_blocking_command_or_file_rule_is_read_and_sent_without_msgspec(tmp_path):
    """msgspec's import was the largest part of what a matching blocking rule cost the
    hook (bench/RESULTS.md): the command and file kinds read their plain form and the
    record is encoded with json, in a process that never loads msgspec nor, like the
    hook (-S), site-packages."""
    import json
    import subprocess
    import sys

    from ways_sensors.config.indexbuild import plain

    out = tmp_path / "out.jsonl"
    forms = [
        plain(decode_rule({"sections": ["tool_call"], "mode": "blocking",
                           "dispatch": {"file": {"path": str(out)}}})),
        plain(decode_rule({"sections": ["tool_call"], "mode": "blocking",
                           "dispatch": {"command": {"argv": ["/bin/true"]}}})),
    ]  # fmt: skip
    code = (
        "import json, sys, time\n"
        "from ways_sensors.config import rules\n"
        "from ways_sensors.pipeline import delivery\n"
        "from ways_sensors.targets import STDLIB_KINDS, Context, Item, get\n"
        "assert STDLIB_KINDS == ('file', 'command')\n"
        "from ways_sensors.pipeline.stages import dumps\n"
        "for form in json.loads(sys.argv[1]):\n"
        "    r = rules._plain(form)\n"
        "    line = dumps({'a': 1, 'x': float('nan')})\n"
        "    ctx = Context('s', 'r', 'sid', '2026-12-03')\n"
        "    got = get(r.dispatch.kind).deliver(r.dispatch.target, [Item({'a': 1}, line)],"
        " ctx, time.monotonic() + 5)\n"
        "    assert got.accepted, got\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('msgspec'))))\n"
    )
    code = f"import sys; sys.path.insert(0, {str(REPO)!r})\n" + code  # -S: no site-packages
    argv = [sys.executable, "-S", "-c", code, json.dumps(forms)]
    r = subprocess.run(argv, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout) == []
    assert out.read_bytes() == b'{"a":1,"x":null}\n'  # a NaN is null, as msgspec writes it


def test_each_kind_says_which_formats_it_carries_as_its_spec_names_them():
    """FORMATS maps every value of the spec's format field (and no other) to a format of
    formats/, and every format of formats/ goes by some kind: what lint tells a rule
    that asks a kind for another is what the kind sends."""
    from ways_sensors import formats
    from ways_sensors.config.specerrors import enum_values

    carried = set()
    for kind, t in TARGETS.items():
        assert set(t.FORMATS.values()) <= set(formats.NAMES), kind
        carried |= set(t.FORMATS.values())
        if t.FORMAT_FIELD is None:
            assert len(t.FORMATS) == 1, kind  # no choice: the one format it sends
            continue
        field = next(f for f in msgspec.structs.fields(t.Spec) if f.name == t.FORMAT_FIELD)
        assert sorted(enum_values(field.type)) == sorted(t.FORMATS), kind
    assert carried == set(formats.NAMES)


def test_otlp_takes_its_encodings_from_the_format_registry():
    """The otlp target's body and content type are the request format's (formats/)."""
    from ways_sensors import formats
    from ways_sensors.targets import otlp

    assert set(otlp.FORMATS.values()) == set(formats.REQUESTS)
    assert formats.request("otlp_protobuf").MEDIA_TYPE == "application/x-protobuf"
    assert formats.request("otlp_json").MEDIA_TYPE == "application/json"
