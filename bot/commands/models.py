"""Which models a command may name for one turn (/duel, /retry <model>)."""

from __future__ import annotations

from bot.llmconfig import LLMConfig


def choosable(llm: LLMConfig) -> list[str]:
    """llm.allowed_models, then the chains' names (a chain is asked by its name)."""
    return list(dict.fromkeys([*llm.allowed_models, *llm.chains]))
