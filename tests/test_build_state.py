"""The typed build cursor (dispatch/buildstate.py) reads `build.json` as the untyped one
wrote it and writes it back as the same bytes; an older one's `tracker` is claude-code's
(tests/agents/test_claude_code.py runs that through a real dispatcher)."""

from __future__ import annotations

import json

from ways_sensors import jsoncore
from ways_sensors.dispatch.buildstate import BuildCursor


def test_a_build_json_from_before_the_typing_saves_back_as_the_same_bytes():
    raw = (
        '{"project":"/p","spool":["0000000002.seg",4096],"journal":["0000000001.seg",512],'
        '"seq":41,"ended":false,"trackers":{"claude-code":{"started":true}},'
        '"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",'
        '"cost":{"amount":"0.25","replies":3,"unpriced":0}}'
    )
    b = BuildCursor.from_json(json.loads(raw))
    assert (b.spool, b.journal, b.seq, b.project) == (
        ("0000000002.seg", 4096),
        ("0000000001.seg", 512),
        41,
        "/p",
    )
    assert jsoncore.dumps(b.as_json(), separators=(",", ":")) == raw


def test_an_older_tracker_is_claude_codes():
    old = {"spool": ["0000000001.seg", 0], "journal": ["0000000001.seg", 0], "seq": 7}
    b = BuildCursor.from_json({**old, "tracker": {"started": True}})
    assert b.trackers == {"claude-code": {"started": True}} and "tracker" not in b.as_json()
