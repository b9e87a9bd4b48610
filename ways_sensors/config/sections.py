"""The record sections, in the spec's order (SPEC section 2), without the spec's imports.

spec.py's `Section` literal names the same sections for msgspec and the type checker
(tests/test_spec.py holds the two equal); this tuple is for code that only needs the
names, such as the `--section` help of every `ways sensors` command, which would
otherwise load spec.py, and with it msgspec, the YAML reader and every target module,
none of which `ways sensors verify` needs (bench/RESULTS.md, 2026-12-03 16:00).
"""

SECTIONS = (
    "user_prompt",
    "queued_message",
    "assistant_response",
    "tool_call",
    "tool_result",
    "subagent",
    "compaction",
    "session_start",
    "session_end",
    "way_event",
    "permission",
    "notification",
    "error",
)
