"""The Claude Code adapter: the builder half (agents.protocols.Adapter). Its face, the
fields, events and sections the hook reads, is its entry in the registry
(agents/__init__.py), so that the hook never imports this package:

adapter.py     what the registry hands out to the dispatcher, blocking path, commands
builder.py     hook payloads -> Drafts, one handler per event
tracker.py     what a session's records need from the transcript, across events
transcript.py  what a transcript line is (the reading is agents/kit/sessionfile.py)
replay.py      a recorded transcript played back as hook payloads (`ways sensors test`)
wiring.py      what `ways reconcile` wires into `settings.json`, and where
examples.py    example payloads per section (`ways sensors fire`)
"""

from ...index import DEFAULT as NAME  # Claude Code is the default agent

__all__ = ["NAME"]
