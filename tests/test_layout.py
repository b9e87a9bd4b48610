"""The state root's map (layout.py): every path under an explicit root, named in its
table; the rule id's two spellings; the one reader of a rule's chain head; and a crash
case driven in-process against a root passed in, with os.environ left alone."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys

import pytest

from ways_sensors.state import cursorread
from ways_sensors.state import layout as layout_mod
from ways_sensors.state.layout import Layout, rule_key, rule_label, split_rule_key, split_rule_label

SID = "5c1e7a2b-3f4d-4e8a-9b6c-0d2f1a3b4c5d"


def path_methods() -> list[str]:
    return [
        n
        for n, f in inspect.getmembers(Layout, inspect.isfunction)
        if not n.startswith("_")
        and n not in ("sessions", "pending_sessions", "ledger_sessions", "cursor_rules")
        and not n.endswith("_head")
    ]


def rendered(lay: Layout, name: str) -> str:
    """The path a method gives, with `<sid>` and `<key>` for its arguments."""
    params = list(inspect.signature(getattr(Layout, name)).parameters)[1:]
    args = {"sid": SID, "key": "KEY", "digest": "DIGEST"}
    path = getattr(lay, name)(*[args[p] for p in params])
    return path.replace(SID, "<sid>").replace("KEY", "<key>").replace("DIGEST", "<digest>")


def test_every_path_is_under_the_root_and_named_in_the_table(tmp_path):
    lay = Layout(str(tmp_path / "root"))
    table = layout_mod.__doc__
    seen = set()
    for name in path_methods():
        path = rendered(lay, name)
        assert path.startswith(lay.root + "/"), (name, path)
        rel = path[len(lay.root) + 1 :]
        seen.add(rel)
        if name.endswith("_dir"):
            assert re.search(r"^    " + re.escape(rel) + r"/", table, re.M), (name, rel)
        else:
            assert re.search(r"^    " + re.escape(rel) + r"[ ,]", table, re.M), (name, rel)
    assert len(seen) == len(path_methods())  # no two names for one path


def test_the_default_root_is_xdg_state_and_an_explicit_root_wins(tmp_path):
    code = "from ways_sensors.state.layout import Layout; print(Layout().root)"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == f"{tmp_path}/xdg/agent-ways"
    assert Layout(str(tmp_path / "mine") + "/").root == f"{tmp_path}/mine"


@pytest.mark.parametrize("sid", ["", "..", "../etc", "a/b", ".hidden", "x" * 129, "a b"])
def test_a_session_id_never_leaves_its_folder(tmp_path, sid):
    lay = Layout(str(tmp_path))
    assert not layout_mod.valid_session_id(sid)
    for name in ("session_dir", "spool_dir", "pending_marker", "ledger", "cursors_dir"):
        with pytest.raises(ValueError):
            getattr(lay, name)(sid)


def test_the_two_spellings_of_a_rule_id_round_trip():
    assert rule_key("audit", "all") == "audit.all"
    assert rule_label("audit", "all") == "audit/all"
    assert split_rule_key(rule_key("my-sensor", "r_1")) == ("my-sensor", "r_1")
    assert split_rule_label(rule_label("my-sensor", "r_1")) == ("my-sensor", "r_1")


def write(path: str, obj: object) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def test_one_reader_of_a_chain_head(tmp_path):
    lay = Layout(str(tmp_path))
    key = rule_key("s", "r")
    assert lay.rule_head(SID, "s", "r") is None
    write(lay.ledger(SID), {"seq": 9, "rules": {"s/r": [4, "L" * 64]}})
    assert lay.rule_head(SID, "s", "r") == (4, "L" * 64)  # the ledger, with no folder
    legacy = lay.cursors_dir(SID) + "/" + key + ".json"  # an older version's cursor file
    write(legacy, {"rule_seq": 0, "hash": "0" * 64, "pending": None})
    assert lay.session_head(SID, "s", "r") is None  # numbered nothing: the ledger stands
    assert lay.rule_head(SID, "s", "r") == (4, "L" * 64)
    rec = {"chain": {"prev": "L" * 64, "hash": "C" * 64}}
    write(legacy, {"rule_seq": 5, "hash": "C" * 64, "pending": rec})
    h = lay.session_head(SID, "s", "r")
    assert (h.rule_seq, h.hash, h.kind, h.pending) == (5, "C" * 64, "cursor", rec)
    # the cursor log (cursorlog.py) is newer than a `.json` of the same rule; its last
    # line wins, a torn one is ignored, the pending batch is read from its file
    with open(lay.cursors_dir(SID) + "/" + key + ".t0.batch", "w") as f:
        f.write(json.dumps(rec) + "\n")
    with open(lay.cursor_log(SID), "w") as f:
        f.write(json.dumps({"rule": key, "rule_seq": 3, "hash": "A" * 64, "batch": None}) + "\n")
        f.write(json.dumps({"rule": key, "rule_seq": 7, "hash": "D" * 64, "batch": "t0"}) + "\n")
        f.write('{"rule": "s.r", "rule_seq": 9, "ha')
    h = lay.session_head(SID, "s", "r")
    assert (h.rule_seq, h.hash, h.kind, h.pending) == (7, "D" * 64, "cursor", [rec])
    assert lay.cursor_log(SID) == lay.cursors_dir(SID) + "/" + cursorread.LOG  # one spelling
    write(lay.head(SID, key), {"rule_seq": 6, "hash": "H" * 64})
    h = lay.session_head(SID, "s", "r")
    assert (h.rule_seq, h.hash, h.kind, h.pending) == (6, "H" * 64, "head", None)  # .head wins
    assert lay.cursor_rules(SID) == [("s", "r")]


def test_a_head_that_is_a_link_or_not_a_head_is_not_read(tmp_path):
    lay = Layout(str(tmp_path))
    key = rule_key("s", "r")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"rule_seq": 3, "hash": "E" * 64}))
    os.makedirs(lay.cursors_dir(SID))
    os.symlink(elsewhere, lay.head(SID, key))
    assert lay.session_head(SID, "s", "r") is None
    os.unlink(lay.head(SID, key))
    for bad in ({"rule_seq": True, "hash": "x"}, {"rule_seq": -1, "hash": "x"}, [1], "[[[["):
        with open(lay.head(SID, key), "w") as f:
            f.write(bad if isinstance(bad, str) else json.dumps(bad))
        assert lay.session_head(SID, "s", "r") is None, bad


def test_a_torn_journal_is_cut_back_in_process_under_an_explicit_root(tmp_path, monkeypatch):
    """A crash case without a process or an environment: a dispatcher killed after
    appending to the journal but before committing the build cursor. The next one cuts
    the uncommitted bytes away before it builds again."""
    from ways_sensors.dispatch.dispatcher import Dispatcher
    from ways_sensors.dispatch.journal import FIRST_SEGMENT, frame

    for var in ("XDG_STATE_HOME", "HOME"):  # anything read from the default root fails
        monkeypatch.setenv(var, "/nonexistent/not-here")
    lay = Layout(str(tmp_path / "state"))
    first = Dispatcher(SID, layout=lay)
    first.session.create()
    first.recover()
    first.journal.stage({"seq": 1})
    first.journal.commit()
    committed = first.build.journal
    assert tuple(committed) == (FIRST_SEGMENT, len(frame(b'{"seq":1}')))
    seg = os.path.join(lay.journal_dir(SID), FIRST_SEGMENT)
    with open(seg, "ab") as f:  # the torn append the kill left behind
        f.write(frame(b'{"seq":2}')[:7])
    second = Dispatcher(SID, layout=lay)
    second.recover()
    assert os.path.getsize(seg) == committed[1]
    assert second.journal.read_from((FIRST_SEGMENT, 0)) == [(committed[1], {"seq": 1})]
    assert sorted(os.listdir(tmp_path)) == ["state"]
    assert os.environ["XDG_STATE_HOME"] == "/nonexistent/not-here"
