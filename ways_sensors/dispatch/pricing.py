"""What a reply cost: its model and token counts priced offline, never a guess.

Hooks see tokens, not dollars. The dispatcher prices every reply it builds with
`genai-prices` (a maintained table of model prices, bundled with the package: nothing is
fetched at run time), at the price in force at the record's own time, so building the
same record again gives the same cost. The hook never imports this module.

What a priced record carries (formats owned here):

    assistant_response (and a subagent's `stop` with usage totals), inside data.usage:
      "cost": {"currency": "USD", "amount": 0.008625, "model": "claude-sonnet-4-5",
               "source": "genai-prices", "version": "0.2.3"}
    or, when no price can be had, no `cost` and
      "cost_missing": "no price for model 'x' in genai-prices 0.2.3"   (or another why:
                      a Gemini CLI reply whose calls named several models, `usage.models`,
                      has no single price)

    session_end, as data.cost: the session's replies summed, subagents' included
      {"currency": "USD", "amount": 0.52, "replies": 12, "unpriced": 1,
       "source": "genai-prices", "version": "0.2.3"}

`amount` is a JSON number (USD; the table's Decimal rounded to 12 places). The token
counts are the record's: Claude Code's `input_tokens` leaves out cached tokens, so the
price is asked for `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`
input tokens of which the two cache counts are cache reads and writes. A reply of
several API calls is priced as that many equal calls (its sums shared out evenly), so a
price tier that applies per request (more than 200k input tokens) is not crossed by the
sum of several small calls.

The session total lives in the build cursor (`Tally`, a few numbers, no content), and
in the session's ledger entry once its folder goes (session.py), so a dispatcher that
restarts, or a resumed run's, goes on counting: a session_end's total covers every run
of the session so far; a record is priced once, when it is built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from ..agents.providers import provider as _provider
from . import pricefast

SOURCE = "genai-prices"
CURRENCY = "USD"
MAX_MODEL = 200  # characters: a longer "model" is no model name, and is not looked up
_TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)

_table: Any = None  # the genai_prices module, imported at the first reply with usage
_version: str | None = None
METADATA_HEAD = 1 << 16  # bytes of a METADATA file read for its Version header


def _prices() -> Any:
    global _table
    if _table is None:
        import genai_prices

        _table = genai_prices
    return _table


def load() -> None:
    """Load the table now (before an import forks its workers, say), if it is there."""
    try:
        _prices().data_snapshot.get_snapshot()
    except ImportError:
        pass


def version() -> str:
    """genai-prices' version as its `__version__` has it, or "absent". Every session_end
    names it, priced replies or not, and importing the package and its table costs more
    than a dispatcher's whole start, so the version is read from the installed
    distribution's metadata beside the package, and the package imported only where
    that is not found."""
    global _version
    if _version is None:
        try:
            _version = _installed_version() or str(_prices().__version__)
        except ImportError:
            _version = "absent"
    return _version


def _installed_version() -> str | None:
    """The Version header of the genai_prices-*.dist-info beside the package (the wheel
    layout pip installs), without importing it; None when there is no single one."""
    import importlib.util

    spec = importlib.util.find_spec("genai_prices")
    if spec is None:
        raise ImportError("genai_prices")
    places = spec.submodule_search_locations or []
    if len(places) != 1:
        return None
    site = os.path.dirname(os.path.normpath(places[0]))
    try:
        found = [n for n in os.listdir(site) if _is_dist_info(n)]
    except OSError:
        return None
    if len(found) != 1:
        return None
    try:
        with open(os.path.join(site, found[0], "METADATA"), "rb") as f:
            head = f.read(METADATA_HEAD).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        if not line.strip():
            break  # the headers end; a description follows
        name, _, value = line.partition(":")
        if name.strip().lower() == "version" and value.strip():
            return value.strip()
    return None


def _is_dist_info(name: str) -> bool:
    stem, _, rest = name.partition("-")
    return stem.lower() == "genai_prices" and rest.endswith(".dist-info")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _when(timestamp: Any) -> datetime | None:
    if isinstance(timestamp, str):
        try:
            return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def price(model: Any, usage: Any, agent: str | None, timestamp: Any) -> dict[str, Any] | str:
    """The cost of one reply: the `cost` object, or why there is none (a string)."""
    if not isinstance(model, str) or not model.strip():
        return "no model named"
    if len(model) > MAX_MODEL:
        return "the model name is too long to look up"
    if not isinstance(usage, dict):
        return "no usage"
    if isinstance(usage.get("models"), list) and len(usage["models"]) > 1:
        return "the reply's calls used several models"  # no single price applies
    try:
        table = _prices()
    except ImportError:
        return f"{SOURCE} is not installed"
    inp, out, cread, cwrite = (_count(usage.get(k)) for k in _TOKENS)
    calls = max(1, _count(usage.get("api_calls")))
    # which provider's price the model name means (agents/providers.py); an agent of
    # several providers has none, and the table finds one by the model's name alone
    known = _provider(agent)
    provider = known.prices if known else None
    when = _when(timestamp)
    # `calls` equal calls of the sums' quotients, then each leftover token (fewer than
    # `calls` of each kind) as a call of its own: exact for a per-token price
    split = [divmod(v, calls) for v in (inp, out, cread, cwrite)]
    shares: list[tuple[int, tuple[int, int, int, int]]] = [(calls, _four([q for q, _ in split]))]
    for i, (_, r) in enumerate(split):
        if r:
            shares.append((r, _four([1 if j == i else 0 for j in range(4)])))
    total, priced_model = Decimal(0), model
    try:
        for n, counts in shares:
            calc = _calc(table, counts, model, provider, when)
            total += Decimal(calc.total_price) * n
            priced_model = calc.model.id
    except LookupError:
        return f"no price for model {model!r} in {SOURCE} {version()}"
    except (ValueError, TypeError, ArithmeticError) as exc:
        return f"{SOURCE} could not price this usage ({type(exc).__name__})"
    return {
        "currency": CURRENCY,
        "amount": _amount(total),
        "model": priced_model,
        "source": SOURCE,
        "version": version(),
    }


def _four(v: list[int]) -> tuple[int, int, int, int]:
    return (v[0], v[1], v[2], v[3])


def _calc(
    table: Any, counts: tuple[int, int, int, int], model: str, provider: str | None, when: Any
) -> Any:
    """The table's price of (uncached input, output, cache read, cache write) tokens,
    from the agent's provider first, then from any that has it."""
    if provider:
        try:
            return _one(table, counts, model, provider, when)
        except LookupError:
            pass
    return _one(table, counts, model, None, when)


def _one(
    table: Any, counts: tuple[int, int, int, int], model: str, provider: str | None, when: Any
) -> Any:
    fast = pricefast.calc(table, counts, model, provider, when)  # a per-token price
    if fast is not None:
        return fast
    i, o, cr, cw = counts
    usage = table.Usage(
        input_tokens=i + cr + cw, output_tokens=o, cache_read_tokens=cr, cache_write_tokens=cw
    )
    return table.calc_price(usage, model, provider_id=provider, genai_request_timestamp=when)


def _amount(value: Decimal) -> float:
    return float(round(value, 12))


class Tally:
    """The session's running total, kept in the build cursor as a plain dict:
    `{"amount": "<decimal>", "replies": n, "unpriced": k}`."""

    def __init__(self, state: Any = None) -> None:
        ok = isinstance(state, dict)
        self.amount = _decimal(state.get("amount")) if ok else Decimal(0)
        self.replies = _count(state.get("replies")) if ok else 0
        self.unpriced = _count(state.get("unpriced")) if ok else 0

    def state(self) -> dict[str, Any]:
        return {"amount": str(self.amount), "replies": self.replies, "unpriced": self.unpriced}

    def apply(self, drafts: Iterable[Any]) -> None:
        """Price every reply among one event's drafts (data.usage.cost or cost_missing),
        count it in the session's total, and give a session_end that total."""
        for d in drafts:
            data = d.data if isinstance(d.data, dict) else None
            if data is None:
                continue
            if d.section == "assistant_response":
                if self._price(d, data):
                    self.replies += 1
                elif isinstance(data.get("usage"), dict):
                    self.unpriced += 1
            elif d.section == "subagent" and data.get("phase") == "stop":
                self._price(d, data)  # its replies are counted once, as assistant_response
            elif d.section == "session_end":
                data["cost"] = {
                    "currency": CURRENCY,
                    "amount": _amount(self.amount),
                    "replies": self.replies,
                    "unpriced": self.unpriced,
                    "source": SOURCE,
                    "version": version(),
                }

    def _price(self, d: Any, data: dict[str, Any]) -> bool:
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return False
        got = price(data.get("model"), usage, getattr(d, "agent", None), d.timestamp)
        if isinstance(got, str):
            usage.pop("cost", None)
            usage["cost_missing"] = got
            return False
        usage.pop("cost_missing", None)
        usage["cost"] = got
        if d.section == "assistant_response":
            self.amount += Decimal(str(got["amount"]))
        return True


def _decimal(value: Any) -> Decimal:
    try:
        return Decimal(str(value)) if value is not None else Decimal(0)
    except (InvalidOperation, ValueError):
        return Decimal(0)
