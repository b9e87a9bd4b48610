"""A session's records as OpenTelemetry GenAI spans (the `otlp` target's `signal: traces`).

spans.py turns a rule's records, in `rule_seq` order, into spans with deterministic
ids; state.py keeps what a span needs from earlier records (when a tool call began, the
turn's prompt) between batches, so a batch sent again after a crash becomes the same
spans. Nothing here is imported by the hook.
"""
