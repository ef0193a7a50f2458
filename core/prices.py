"""The price table: what a model charges per token, from pydantic's ``genai-prices`` data.

``genai-prices`` ships a maintained table of model prices (cache reads and writes, tiers above a
prompt size, prices that changed on a date) inside the package, and reads it offline; it fetches
newer data only when asked to (``UpdatePrices``), which ctxscope never does. :func:`rates` looks a
model up by the provider that served it and the time of the call, and gives the price of each
kind of token at that call (the tier depends on the call's prompt); a model the table does not
know gets a reason, never a price of 0.

Providers are named as the sessions name them; :data:`PROVIDER_IDS` maps them to the table's. A
provider the table does not have (a subscription, a gateway such as opencode's) is priced at the
model's list price where the table knows the model under another provider, and says so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice, TieredPrices

PROVIDER_IDS: dict[str, str | None] = {
    "anthropic": "anthropic",
    "amazon-bedrock": "aws",
    "bedrock": "aws",
    "vertex": "google",
    "google-vertex": "google",
    "google-vertex-anthropic": "google",
    "google": "google",
    "openai": "openai",
    "openai-codex": "openai",
    "azure": "azure",
    "openrouter": "openrouter",
    "groq": "groq",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "x-ai": "x-ai",
    "xai": "x-ai",
}
"""Session provider → the table's provider id (None, or absent: look the model up by name)."""

SUBSCRIPTIONS = {"openai-codex", "github-copilot", "opencode"}
"""Providers billed by subscription or credits: the figure is the API list price of the same
tokens, what the session would have cost on the model's own API."""

_MTOK = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token of each kind, for one call (the tier of its prompt applied)."""

    input: Decimal
    """Uncached prompt tokens."""
    cache_read: Decimal
    """Prompt tokens read from the cache."""
    cache_write: Decimal
    """Prompt tokens written to the cache."""
    output: Decimal
    """Generated tokens (reasoning included)."""
    model_id: str
    """The table's name of the model."""
    provider_id: str
    """The table's name of the provider it was priced under."""
    note: str | None = None
    """How it was priced when not as recorded (another provider's list price)."""


class UnknownPrice(Exception):
    """The table has no price for this model; ``str(error)`` says which and why."""


def rates(
    model: str | None, provider: str | None, at: datetime | None, prompt_tokens: int
) -> Rates:
    """The rates of ``model`` served by ``provider`` at ``at`` for a prompt of
    ``prompt_tokens`` (tiers). Raises :class:`UnknownPrice`."""
    if not model or model.startswith("<"):
        raise UnknownPrice(f"no model recorded ({model or 'none'})")
    day = at.date().isoformat() if at is not None else None
    price, model_id, provider_id, note = _lookup(model, provider, day)
    return Rates(
        input=_per_token(price.input_mtok, prompt_tokens),
        cache_read=_per_token(price.cache_read_mtok or price.input_mtok, prompt_tokens),
        cache_write=_per_token(price.cache_write_mtok or price.input_mtok, prompt_tokens),
        output=_per_token(price.output_mtok, prompt_tokens),
        model_id=model_id,
        provider_id=provider_id,
        note=note,
    )


def _per_token(price: Decimal | TieredPrices | None, prompt_tokens: int) -> Decimal:
    from genai_prices.types import calc_unit_price

    return calc_unit_price(price, 1, prompt_tokens, _MTOK)


@lru_cache(maxsize=512)
def _lookup(
    model: str, provider: str | None, day: str | None
) -> tuple[ModelPrice, str, str, str | None]:
    """The table's price of ``model`` (cached per model, provider and day). The table is
    imported on first use: loading it takes a tenth of a second."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    at = datetime.fromisoformat(f"{day}T12:00:00+00:00") if day else None
    table_provider = PROVIDER_IDS.get(provider or "")
    attempts: list[str | None] = [table_provider] if table_provider else []
    attempts.append(None)
    last = ""
    for provider_id in attempts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = calc_price(
                    PriceUsage(input_tokens=1, output_tokens=1),
                    model_ref=model,
                    provider_id=provider_id,
                    genai_request_timestamp=at,
                )
        except LookupError as exc:
            last = str(exc)
            continue
        note = None
        if provider and (provider_id is None or provider in SUBSCRIPTIONS):
            if found.provider.id != provider:
                note = (
                    f"priced at {found.provider.id}'s list price ({provider} is not in the table)"
                )
            if provider in SUBSCRIPTIONS:
                note = f"{provider} bills by subscription: the list price of the same tokens"
        return found.model_price, found.model.id, found.provider.id, note
    raise UnknownPrice(f"{model} is not in the price table ({last})")


def list_price(model: str, provider: str | None = None) -> ModelPrice:
    """The table's price entry of a model today (for tests and the README)."""
    return _lookup(model, provider, None)[0]
