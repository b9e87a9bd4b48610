"""The detached per-session dispatcher and everything it runs: the build loop over the
spool, the journal, a worker per rule (its crew, cursors, read-ahead and refinishing),
lost sessions, the resumer, retention and metrics; and the blocking path, which
dispatches from the hook itself, with the launcher that starts a dispatcher."""
