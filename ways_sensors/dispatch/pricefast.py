"""A reply's price worked out here, as genai-prices works it out, when its model's price
is only per-token.

genai-prices prices any usage against any price (units and their decomposition,
request fees, audio, variants, validation of every unit) on every call, which is most of
what pricing a reply costs; an import prices thousands. When the price in force for the
model at the reply's time prices the four token kinds a reply carries (input, output,
cache read, cache write: each a Decimal per million tokens, or a table of tiers chosen
by the call's input tokens), every kind the reply used has its price, and no fee applies
to the request itself, the price is the sum of count * price / 1,000,000 over the kinds,
the uncached input priced as input: genai-prices' own arithmetic (calc_unit_price), in
Decimal. Anything else (a request fee, an unpriced kind used, Groq's audio models) is
genai-prices' to price. tests/test_pricing_fast.py holds the two equal for every model
and price of the table at fixed usages and times, and over random ones.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, NamedTuple

TOKEN_PRICES = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
# a price that applies to every reply whatever its tokens (a fee a request): such a price
# is genai-prices' to apply; any other field prices what a reply's usage never counts
# (web searches, an hour's cache writes, audio), which costs a reply nothing
NOT_ZERO = frozenset({"requests_kcount"})
PER = 1_000_000


class Calc(NamedTuple):
    """What pricing.py reads of genai-prices' PriceCalculation."""

    total_price: Decimal
    model: Any  # genai-prices' ModelInfo (its `id` is the model priced)


def calc(
    table: Any, counts: tuple[int, int, int, int], model: str, provider: str | None, when: Any
) -> Calc | None:
    """The price of (uncached input, output, cache read, cache write) tokens, or None for
    genai-prices to work out. LookupError as genai-prices raises it: no such model (for
    that provider)."""
    provider_info, info = table.data_snapshot.get_snapshot().find_provider_model(
        model, None, provider, None
    )
    if provider_info.id == "groq":  # genai-prices bills its audio models by the second
        return None
    price = info.get_prices(when or datetime.now(tz=timezone.utc))
    fields = {k: v for k, v in vars(price).items() if v is not None}
    if fields.keys() & NOT_ZERO:
        return None
    fields = {k: v for k, v in fields.items() if k in TOKEN_PRICES}
    by_kind = dict(zip(TOKEN_PRICES, counts, strict=True))
    if any(n and kind not in fields for kind, n in by_kind.items()):
        return None  # a kind used and not priced: genai-prices decides what it costs
    tiers = table.types.TieredPrices
    total_input = sum(counts) - counts[1]  # input as the table counts it: with the cache's
    total = Decimal(0)
    for kind, value in fields.items():
        if isinstance(value, tiers):
            unit = value.base
            for tier in reversed(value.tiers):
                if total_input > tier.start:
                    unit = tier.price
                    break
        elif isinstance(value, Decimal):
            unit = value
        else:
            return None
        total += unit * Decimal(by_kind[kind]) / PER
    return Calc(total, info)
