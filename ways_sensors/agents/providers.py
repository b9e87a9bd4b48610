"""Which model provider stands behind each coding agent: one table, keyed by agent.

A provider has two names, because two vocabularies ask for it:

    genai    the OpenTelemetry GenAI conventions' `gen_ai.provider.name` (traces/spans.py)
    prices   the provider id of genai-prices' table (dispatch/pricing.py), which names
             Google's models `google` where the conventions say `gcp.gemini`

Cursor and Copilot CLI run models of several providers and say which in no field a hook
sees, so they have no entry: their spans carry no provider and their prices are looked
up by the model's name alone. Adding an agent with one provider is one line here.
"""

from ..index import DEFAULT


class Provider:
    """The two names of one agent's provider."""

    __slots__ = ("genai", "prices")

    def __init__(self, genai: str, prices: str) -> None:
        self.genai = genai
        self.prices = prices

    def __repr__(self) -> str:
        return "Provider(genai=%r, prices=%r)" % (self.genai, self.prices)


PROVIDERS = {
    DEFAULT: Provider("anthropic", "anthropic"),  # Claude Code
    "codex": Provider("openai", "openai"),
    "gemini": Provider("gcp.gemini", "google"),
}


def provider(agent: "str | None") -> "Provider | None":
    """The agent's provider; None for an agent of several providers, or none named
    (a record without `agent` came from the default agent)."""
    return PROVIDERS.get(agent or DEFAULT)
