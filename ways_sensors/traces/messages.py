"""What a span says of the conversation, in the names the backends read.

Two vocabularies, side by side, on the same spans:

* the OpenTelemetry GenAI conventions (1.37): `gen_ai.input.messages` and
  `gen_ai.output.messages` on a `chat` span, as JSON arrays of
  {"role", "parts": [{"type": "text", "content"}]}; `gen_ai.usage.*` for tokens;
* OpenInference, which Arize Phoenix reads (and Langfuse maps): the span's kind
  (`openinference.span.kind`: LLM, TOOL, AGENT), `input.value` / `output.value` with
  their mime types, `llm.model_name`, `llm.input_messages.<i>.message.role|content`,
  `llm.output_messages.<i>...`, `llm.token_count.prompt|completion|total`, `tool.name`
  and `tool.parameters`, and `session.id` on every span: Phoenix groups a session's
  traces by it and shows its first input and last output from the root spans' values;
* Langfuse's own (its OpenTelemetry intake reads `langfuse.*` before the others):
  `langfuse.observation.type` (generation, tool, agent), `langfuse.observation.input`
  and `.output` on the spans that have them, `langfuse.trace.input` and `.output` on
  a run's root (the run's first prompt, its last reply), and `langfuse.session.id`
  with `user.id` and `langfuse.user.id` on every span (spans.Spans._common), which
  Langfuse reads as the trace's session and user.

A chat span's input is its turn's prompt (the user_prompt that began the turn); its
output is the reply. A root (or a resumed run's) span's input is the run's first
prompt and its output the run's last reply of the main agent. Cost: a chat span
carries its reply's own cost (`ways.cost.amount`); an agent span carries the session's
running total only as `ways.session.cost.amount`, so summing `ways.cost.amount` over a
trace's spans gives the session's cost, never more.
"""

from __future__ import annotations

from typing import Any

from .attrs import MAX_TEXT
from .attrs import text as _text

LLM, TOOL, AGENT = "LLM", "TOOL", "AGENT"
TEXT, JSON = "text/plain", "application/json"


def clip(value: Any) -> str | None:
    """A prompt or reply as the span state keeps it: text, bounded; None when absent."""
    if value is None:
        return None
    return _text(value)[:MAX_TEXT]


def _message(role: str, content: str) -> list[dict[str, Any]]:
    return [{"role": role, "parts": [{"type": "text", "content": content}]}]


def chat(prompt: str | None, reply: Any, model: str | None) -> list[tuple[str, Any]]:
    """A chat span's input and output, in both vocabularies."""
    pairs: list[tuple[str, Any]] = [
        ("openinference.span.kind", LLM),
        ("langfuse.observation.type", "generation"),
        ("llm.model_name", model),
    ]
    if prompt is not None:
        pairs += [
            ("langfuse.observation.input", prompt),
            ("gen_ai.input.messages", _text(_message("user", prompt))),
            ("input.value", prompt),
            ("input.mime_type", TEXT),
            ("llm.input_messages.0.message.role", "user"),
            ("llm.input_messages.0.message.content", prompt),
        ]
    if reply is not None:
        out = _text(reply)
        pairs += [
            ("langfuse.observation.output", out),
            ("gen_ai.output.messages", _text(_message("assistant", out))),
            ("output.value", out),
            ("output.mime_type", TEXT),
            ("llm.output_messages.0.message.role", "assistant"),
            ("llm.output_messages.0.message.content", out),
        ]
    return pairs


def usage(got: Any) -> list[tuple[str, Any]]:
    """A reply's tokens (input counts the cached ones, as the conventions say) and its
    own cost, when the record has them."""
    u: dict[str, Any] = got if isinstance(got, dict) else {}
    if not u:
        return []

    def count(key: str) -> int:
        v = u.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    cread, cwrite = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    prompt, completion = count("input_tokens") + cread + cwrite, count("output_tokens")
    pairs: list[tuple[str, Any]] = [
        ("gen_ai.usage.input_tokens", prompt),
        ("gen_ai.usage.output_tokens", completion),
        ("gen_ai.usage.cache_read.input_tokens", cread),
        ("gen_ai.usage.cache_creation.input_tokens", cwrite),
        ("llm.token_count.prompt", prompt),
        ("llm.token_count.completion", completion),
        ("llm.token_count.total", prompt + completion),
    ]
    cost = u.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)):
        pairs += [
            ("ways.cost.amount", float(cost["amount"])),
            ("ways.cost.currency", cost.get("currency")),
            ("ways.cost.source", f"{cost.get('source')} {cost.get('version')}"),
        ]
    return pairs


def tool(name: str, args: str | None, result: Any, has_result: bool) -> list[tuple[str, Any]]:
    """An execute_tool span's arguments and result as OpenInference's input and output."""
    pairs: list[tuple[str, Any]] = [
        ("openinference.span.kind", TOOL),
        ("langfuse.observation.type", "tool"),
        ("tool.name", name),
    ]
    if args is not None:
        pairs += [("tool.parameters", args), ("input.value", args), ("input.mime_type", JSON)]
        pairs.append(("langfuse.observation.input", args))
    if has_result:
        out = _text(result)
        pairs += [("output.value", out), ("output.mime_type", TEXT)]
        pairs.append(("langfuse.observation.output", out))
    return pairs


def agent(
    first: str | None, last: str | None, cost: Any, root: bool = False
) -> list[tuple[str, Any]]:
    """An invoke_agent span (the root, a resumed run, a subagent): its run's first input
    and last output (a run's `root`: the trace's too, for Langfuse), and the session's
    running cost under its own name."""
    pairs: list[tuple[str, Any]] = [
        ("openinference.span.kind", AGENT),
        ("langfuse.observation.type", "agent"),
    ]
    if first is not None:
        pairs += [("input.value", first), ("input.mime_type", TEXT)]
        pairs.append(("langfuse.observation.input", first))
        if root:
            pairs.append(("langfuse.trace.input", first))
    if last is not None:
        pairs += [("output.value", last), ("output.mime_type", TEXT)]
        pairs.append(("langfuse.observation.output", last))
        if root:
            pairs.append(("langfuse.trace.output", last))
    if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)):
        pairs += [
            ("ways.session.cost.amount", float(cost["amount"])),
            ("ways.session.cost.currency", cost.get("currency")),
        ]
    return pairs
