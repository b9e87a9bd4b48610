"""The agents registry: every registered agent has both halves, and its face is free."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ways_sensors import agents
from ways_sensors.agents import protocols
from ways_sensors.config.spec import SECTIONS

from ..conftest import REPO

ALL = list(agents.AGENTS)


def test_the_default_is_registered_and_listed_first():
    assert agents.DEFAULT == "claude-code"
    assert agents.names()[0] == agents.DEFAULT
    assert set(agents.names()) == set(agents.AGENTS)


def test_unknown_names():
    assert agents.face("no-such-agent") is None
    with pytest.raises(KeyError):
        agents.adapter("no-such-agent")


def test_protocols_are_reachable_from_the_registry():
    assert agents.Face is protocols.Face and agents.Adapter is protocols.Adapter
    with pytest.raises(AttributeError):
        _ = agents.NoSuchThing


@pytest.mark.parametrize("name", ALL)
def test_each_adapter_has_both_halves(name):
    face = agents.face(name)
    adapter = agents.adapter(name)
    assert isinstance(face, protocols.Face)
    assert isinstance(adapter, protocols.Adapter)
    assert face.NAME == adapter.NAME == name
    assert isinstance(adapter.new_builder(), protocols.SessionBuilder)


@pytest.mark.parametrize("name", ALL)
def test_what_the_hook_hands_off_the_builder_can_build(name):
    face, adapter = agents.face(name), agents.adapter(name)
    assert set(face.EVENT_SECTIONS) <= adapter.EVENTS
    assert set(adapter.WIRED_EVENTS) <= set(face.EVENT_SECTIONS)  # nothing wired in vain
    for sections in face.EVENT_SECTIONS.values():
        assert set(sections) <= set(SECTIONS)
    for event in (face.START_EVENT, face.END_EVENT):
        assert event is None or event in face.EVENT_SECTIONS


@pytest.mark.parametrize("name", ALL)
def test_a_face_imports_nothing(name):
    """The face is on the hook's fast path: reading it never imports the agent's adapter
    package."""
    code = (
        "import sys; before = set(sys.modules); "
        "from ways_sensors import agents; agents.face(%r); "
        "print(' '.join(sorted(set(sys.modules) - before)))" % name
    )
    r = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    loaded = set(r.stdout.split())
    assert loaded == {
        "ways_sensors",
        "ways_sensors.agents",
        "ways_sensors.index",  # where the faces are written
        "ways_sensors.roots",
    }, loaded


def test_every_agent_but_the_default_names_its_config_home_and_sessions():
    """The optional members `reconcile --agent all` and `sensors test` rely on."""
    for name in ALL:
        adapter = agents.adapter(name)
        home = getattr(adapter, "config_home", None)
        if name != agents.DEFAULT:
            assert home is not None and home("/p").startswith("/p/")
        assert callable(getattr(adapter, "is_session_file", None)) == (name in ("codex", "gemini"))
