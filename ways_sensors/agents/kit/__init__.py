"""The agent kit: what the five adapters share, so each adapter package holds only its agent.

sessionfile.py  reading an agent's session file (transcript, rollout, chat file) within
                bounds: regular files only, bytes and time per call, long lines skipped
building.py     builder scaffolding: a session file's reading guarded (a failure logged
                content-free, the payload's records built all the same), and the data
                of the session_start, session_end and compaction records
replaying.py    replay scaffolding for `ways sensors test`: the scratch copy a replay
                grows as it goes, the build call that names the recorded file, the end
                of a recording
adapter.py      the adapter base (agents.protocols.Adapter) each `agents/<name>/adapter.py`
                fills in with its builder, examples, session files and wiring

Beside it: drafting.py (one event's drafts), flat_hooks.py (the flat hooks-file
wiring), pairing.py, tool_kinds.py, matcher_groups.py. Nothing here is on the hook's
path.
"""
