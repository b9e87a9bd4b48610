"""The Gemini CLI adapter: the builder half (agents.protocols.Adapter). Its face, what
the hook reads, is its entry in the registry (agents/__init__.py).

Gemini CLI's hooks (`~/.gemini/settings.json`, Claude Code's matcher-group shape,
timeouts in milliseconds) send `hook_event_name`, `session_id`, `transcript_path`
(the chat file), `cwd` and an ISO `timestamp`. What its events leave out, the builder
recovers (builder.py): a failing command is an ordinary AfterTool whose exit code is
only inside `tool_response.llmContent`; tool calls carry no id (paired by order within
a turn); PreCompress fires before every model call, compressed or not, so the hook
notes the chat file's size at PreCompress (SIZE_EVENTS) and the builder reads whether
the chat restarted after it, and at AfterAgent, up to which the builder reads the
turn's model and tokens from the chat file. BeforeModel, AfterModel (one per streamed
chunk, thinking included) and BeforeToolSelection are neither wired nor read. The builder half:

adapter.py     what the registry hands out
builder.py     hook payloads -> Drafts; failures, pairing and compressions recovered
chats.py       reading the chat file JSONL: compressions, replies' tokens, the replay
wiring.py      what `ways reconcile --agent gemini` writes into settings.json
"""

NAME = "gemini"
