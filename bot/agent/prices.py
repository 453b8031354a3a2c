"""Money from token usage: the price table (`llm.prices`, per million tokens) applied to a turn's `usage`."""

from __future__ import annotations

from collections.abc import Mapping

from bot.agent.modelapi import Usage
from bot.llmconfig import PriceConfig

PER = 1_000_000


def cost(prices: Mapping[str, PriceConfig], model: str, usage: Usage) -> float | None:
    """None when the model has no price (unknown is not free); cached input at its own price when it has one."""
    price = prices.get(model)
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    return ((usage.prompt_tokens - cached) * price.input + cached * cached_price
            + usage.completion_tokens * price.output) / PER
