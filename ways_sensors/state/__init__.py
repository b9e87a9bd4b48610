"""The state root: every path under it (layout.py), the safety rules every file there
passes (secure.py), locked and atomic writes (files.py), the events log, and the
per-session files the hook and the dispatcher share: the spool, the cursor log, the
session folder, counters, previews and taps."""
