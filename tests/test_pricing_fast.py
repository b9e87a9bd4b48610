"""dispatch/pricefast.py prices a reply as genai-prices does, for every model of the
table whose price qualifies: the same Decimal and the same model, over random usages
and times; anything it leaves, genai-prices prices."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import genai_prices
from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors.dispatch import pricefast, pricing

SNAPSHOT = genai_prices.data_snapshot.get_snapshot()
PAIRS = sorted((p.id, m.id) for p in SNAPSHOT.providers for m in p.models)
START = datetime(2023, 1, 1, tzinfo=timezone.utc)


def _genai(counts, model, provider, when):
    i, o, cr, cw = counts
    usage = genai_prices.Usage(
        input_tokens=i + cr + cw, output_tokens=o, cache_read_tokens=cr, cache_write_tokens=cw
    )
    return genai_prices.calc_price(usage, model, provider_id=provider, genai_request_timestamp=when)


tokens = st.integers(0, 3_000_000) | st.sampled_from([0, 1, 199_999, 200_000, 200_001])


@settings(max_examples=1500, deadline=None)
@given(
    st.sampled_from(PAIRS),
    st.tuples(tokens, tokens, tokens, tokens),
    st.integers(0, 4 * 365 * 24 * 3600),
)
def test_a_per_token_price_is_genai_prices_own(pair, counts, seconds):
    provider, model = pair
    when = START + timedelta(seconds=seconds)
    try:
        want = _genai(counts, model, provider, when)
    except LookupError:  # the model's id names another provider's: both look it up alike
        try:
            pricefast.calc(genai_prices, counts, model, provider, when)
        except LookupError:
            return
        raise AssertionError(f"found {pair} where genai-prices does not") from None
    except (ValueError, TypeError, ArithmeticError) as exc:
        fast = pricefast.calc(genai_prices, counts, model, provider, when)
        assert fast is None, (pair, counts, exc)  # genai-prices refuses what it was given
        return
    fast = pricefast.calc(genai_prices, counts, model, provider, when)
    if fast is not None:
        assert (fast.total_price, fast.model.id) == (want.total_price, want.model.id), pair


USAGES = [(1200, 300, 1000, 200), (250_000, 10, 0, 0), (0, 5, 0, 0), (10, 0, 300_000, 1)]
TIMES = [datetime(2024, 7, 1, tzinfo=timezone.utc), datetime(2026, 12, 1, 3, tzinfo=timezone.utc)]


def test_every_model_of_the_table_is_priced_as_genai_prices_prices_it():
    taken = 0
    for (provider, model), when, counts in (
        (pair, when, counts) for pair in PAIRS for when in TIMES for counts in USAGES
    ):
        try:
            want = _genai(counts, model, provider, when)
        except (LookupError, ValueError, TypeError, ArithmeticError):
            continue  # the random test checks that the fast path refuses these too
        fast = pricefast.calc(genai_prices, counts, model, provider, when)
        if fast is not None:
            taken += 1
            got = (fast.total_price, fast.model.id)
            assert got == (want.total_price, want.model.id), (provider, model, when, counts)
    assert taken > len(PAIRS)  # most of the table's prices take it


def test_most_replies_of_the_recorded_agents_take_the_per_token_path():
    """Claude's, OpenAI's and Gemini's current models are priced per token: the fast
    path is the one a reply takes, not an exception."""
    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    for provider, model in (
        ("anthropic", "claude-sonnet-4-5"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai", "gpt-5"),
        ("google", "gemini-2.5-pro"),
    ):
        counts = (1200, 300, 1000, 0)
        fast = pricefast.calc(genai_prices, counts, model, provider, now)
        assert fast is not None, model
        assert fast.total_price == _genai(counts, model, provider, now).total_price


def test_pricing_gives_the_same_cost_object_either_way(monkeypatch):
    usage = {"input_tokens": 900, "output_tokens": 120, "cache_read_input_tokens": 4000,
             "cache_creation_input_tokens": 300, "api_calls": 3}  # fmt: skip
    ts = "2026-11-29T23:52:44.031Z"
    fast = pricing.price("claude-sonnet-4-5", usage, "claude-code", ts)
    monkeypatch.setattr(pricefast, "calc", lambda *a: None)
    assert pricing.price("claude-sonnet-4-5", usage, "claude-code", ts) == fast
    assert isinstance(fast, dict) and fast["amount"] > 0
