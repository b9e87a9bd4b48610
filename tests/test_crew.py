"""The crew in process (crew.py): when the dispatcher may wait on its spool instead of
polling it (dispatcher.py, spoolwatch.py), asked without walking every worker again."""

from __future__ import annotations

from ways_sensors import records
from ways_sensors.config.rules import LoadedRule
from ways_sensors.config.specdecode import decode_rule
from ways_sensors.dispatch.crew import Crew
from ways_sensors.dispatch.journal import Journal
from ways_sensors.dispatch.worker import Worker
from ways_sensors.state.layout import Layout
from ways_sensors.state.session import Session

SID = "5d0c6a8e-3f7e-4d8a-9a51-6c1f2e0b7a11"


def _add(journal: Journal, reason: str) -> None:
    draft = records.Draft("session_end", "", "2026-01-01T00:00:00Z", {"reason": reason})
    journal.stage_drafts([draft], "/p")
    journal.commit()


def test_caught_up_follows_the_journal_and_asks_the_workers_once_per_change(tmp_path):
    session = Session(SID, Layout(str(tmp_path / "state")))
    session.create()
    journal = Journal(session.journal, SID)
    crew = Crew(journal, session)
    for name in ("a", "b"):
        spec = decode_rule(
            {"sections": ["session_end"], "dispatch": {"file": {"path": str(tmp_path / name)}}}
        )
        rule = LoadedRule("s", name, spec, lambda rec: True, "user", "s.yaml")
        crew.workers[name] = Worker(journal, session, rule)
    asked = []
    for w in crew.workers.values():
        w.done = lambda w=w: asked.append(w.rid) or Worker.done(w)

    assert crew.caught_up()  # an empty journal: nothing owed
    assert len(asked) == 2
    assert crew.caught_up() and len(asked) == 2  # nothing moved: the workers are not asked

    _add(journal, "a record")
    assert not crew.caught_up()  # the journal grew: both owe it
    assert not crew.caught_up()  # and are asked again until they are done
    crew.workers["a"].step()
    assert not crew.caught_up()  # b still owes it
    crew.workers["b"].step()
    before = len(asked)
    assert crew.caught_up()
    assert crew.caught_up() and len(asked) == before + 2  # kept once it holds
    assert (tmp_path / "a").read_text().count("\n") == 1
