"""Failover chains: named lists of (provider, model) links, defined once in `llm.chains`, and the rules that
decide when a failed request moves on to the next link.

Without `llm.providers`/`llm.chains` the provider `default` is OPENAI_BASE_URL / OPENAI_API_KEY and the chain
`default` is chat_model on it, so an existing deployment runs unchanged. A later per-agent setting names a
chain; today a chat's /model picks one by its name or by its first model.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.agent.events import FailureKind
from bot.llmconfig import LLMConfig, ProviderConfig

DEFAULT = "default"
# The provider is unwell, not the request: another provider may well answer it. A 401/403 is a key problem
# of this provider alone; "other" (a 400 the request caused, an unknown model) would fail anywhere.
FAILOVER_KINDS = frozenset({FailureKind.RATE_LIMIT, FailureKind.SERVER, FailureKind.TIMEOUT, FailureKind.CONNECTION,
                            FailureKind.AUTH})


@dataclass(frozen=True, slots=True)
class Link:
    provider: str
    model: str
    context_tokens: int

    @property
    def label(self) -> str:
        """How traces and logs name the link: the model alone on the default provider, as before chains."""
        return self.model if self.provider == DEFAULT else f"{self.provider}/{self.model}"


def provider_configs(llm: LLMConfig) -> dict[str, ProviderConfig]:
    derived = ProviderConfig(base_url=llm.base_url, api_keys=[llm.api_key] if llm.api_key else [])
    return {DEFAULT: derived, **llm.providers}


class Chains:
    def __init__(self, llm: LLMConfig) -> None:
        self.chains: dict[str, tuple[Link, ...]] = {
            DEFAULT: (Link(DEFAULT, llm.chat_model, llm.context_tokens),),
            **{name: tuple(Link(link.provider, link.model, link.context_tokens or llm.context_tokens)
                           for link in links) for name, links in llm.chains.items()}}
        self._window = llm.context_tokens

    def resolve(self, model: str) -> tuple[Link, ...]:
        """The chain named `model`, else the first chain (default first) that starts with it, else the first link
        of any chain with that model, alone, else `model` alone on the default chain's first provider (a model
        from `llm.allowed_models`)."""
        if model in self.chains:
            return self.chains[model]
        for chain in self.chains.values():
            if chain[0].model == model:
                return chain
        link = next((link for link in self.links() if link.model == model), None)
        return (link or Link(self.chains[DEFAULT][0].provider, model, self._window),)

    def links(self) -> list[Link]:
        """Every link of every chain, once (doctor checks each)."""
        return list(dict.fromkeys(link for chain in self.chains.values() for link in chain))


def moves_on(kind: FailureKind, failed: Link, candidate: Link) -> bool:
    """May a request that failed with `kind` on `failed` be sent to `candidate`? "Context too long" only moves
    to a link with a bigger window; a request the provider refused for its content never moves."""
    if kind is FailureKind.CONTEXT:
        return candidate.context_tokens > failed.context_tokens
    return kind in FAILOVER_KINDS
