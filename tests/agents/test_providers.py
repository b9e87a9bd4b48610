"""The provider table (agents/providers.py): each agent's two provider names are ones the
two vocabularies know (the spans read `genai`, the prices `prices`)."""

from __future__ import annotations

from genai_prices import data

from ways_sensors import agents
from ways_sensors.agents.providers import PROVIDERS, provider

# `gen_ai.provider.name`'s well-known values in the GenAI semantic conventions 1.37
GENAI_PROVIDERS = {
    "anthropic",
    "aws.bedrock",
    "azure.ai.inference",
    "azure.ai.openai",
    "cohere",
    "deepseek",
    "gcp.gemini",
    "gcp.gen_ai",
    "gcp.vertex_ai",
    "groq",
    "ibm.watsonx.ai",
    "mistral_ai",
    "openai",
    "perplexity",
    "x_ai",
}


def test_every_entry_is_a_registered_agent_and_names_known_providers():
    assert set(PROVIDERS) <= set(agents.names())
    assert {p.genai for p in PROVIDERS.values()} <= GENAI_PROVIDERS
    assert {p.prices for p in PROVIDERS.values()} <= {p.id for p in data.providers}


def test_a_record_without_an_agent_is_the_default_agents_and_a_multi_provider_agent_has_none():
    assert provider(None) is PROVIDERS[agents.DEFAULT]
    assert provider("") is PROVIDERS[agents.DEFAULT]
    assert provider("cursor") is None and provider("copilot") is None
