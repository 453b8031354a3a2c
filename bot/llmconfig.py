"""The model side of the configuration (`llm:` and `budgets:`): providers, failover chains, breakers, prices,
thinking and spending caps. Kept apart from bot/config.py, which reads and checks the whole file."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Section(BaseModel):
    """Every configuration section: an unknown key is an error (with a did-you-mean), never ignored."""

    model_config = ConfigDict(extra="forbid")


class ProviderConfig(Section):
    """One model provider: its wire protocol (`kind`), endpoint and keys, named by env var (several: a pool)."""

    kind: Literal["openai", "anthropic", "gemini"] = "openai"
    base_url: str | None = None  # None: the kind's public endpoint
    api_key_env: str | list[str] | None = None  # env var(s) holding the key(s); a list rotates on 429
    api_keys: list[str] = Field(default_factory=list, repr=False, exclude=True)  # filled from api_key_env
    max_tokens: int = Field(default=8192, ge=1)  # anthropic, gemini: the answer's cap (Anthropic requires one)
    thinking_tokens: int | None = Field(default=None, ge=1024)  # anthropic, gemini: thinking with this budget

    @property
    def key_envs(self) -> list[str]:
        env = self.api_key_env
        return [] if env is None else [env] if isinstance(env, str) else list(env)


class LinkConfig(Section):
    """One link of a failover chain: a model on a provider, and its context window when known."""

    provider: str = "default"
    model: str
    context_tokens: int | None = Field(default=None, ge=1000)  # "context too long" looks for a bigger one


class BreakerConfig(Section):
    """Per provider: this many failures in a row open it; after `cooldown` seconds one request probes it."""

    failures: int = Field(default=3, ge=1)
    cooldown: float = Field(default=30.0, gt=0)


class PriceConfig(Section):
    """Money per million tokens (any currency; the dashboard shows the number as it is)."""

    input: float = Field(default=0.0, ge=0)
    output: float = Field(default=0.0, ge=0)
    cached_input: float | None = Field(default=None, ge=0)  # None: the input price


class LLMConfig(Section):
    base_url: str | None = None  # env OPENAI_BASE_URL
    api_key: str | None = Field(default=None, repr=False)  # env OPENAI_API_KEY only
    chat_model: str = "gpt-4o-mini"  # env BOTHUB_MODEL
    skill_model: str | None = None  # cheaper model for tool skills; defaults to chat_model
    allowed_models: list[str] = Field(default_factory=list)
    context_tokens: int = Field(default=32000, ge=1000)
    max_turns: int = Field(default=30, ge=1)
    timeout: float = Field(default=60.0, gt=0)  # seconds per HTTP phase
    max_retries: int = Field(default=2, ge=0)
    run_deadline: float = Field(default=900.0, gt=0)  # seconds per run; above the 10 minutes an approval waits
    temperature: float | None = Field(default=None, ge=0, le=2)
    vision_models: list[str] = Field(default_factory=list)  # these get images as image parts
    transcription_model: str | None = None  # set: voice messages are transcribed (/audio/transcriptions)
    embedding_model: str | None = None  # set: memories are embedded (/embeddings) and recalled by meaning
    speech_model: str | None = None  # set: answers can be spoken (/audio/speech, /voice)
    speech_voice: str = "alloy"
    voice_replies: Literal["off", "auto", "on"] = "off"  # a chat's default for /voice (auto: voice for voice)
    auto_titles: bool = True  # a short title from each conversation's first exchange, by skill_model
    # Providers and failover chains (README "Models and failover"). Without them: a provider `default` from
    # OPENAI_BASE_URL / OPENAI_API_KEY and a chain `default` of chat_model on it, as before.
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    chains: dict[str, list[LinkConfig]] = Field(default_factory=dict)
    failover_retries: int = Field(default=0, ge=0)  # retries on a link before the next one; the last: max_retries
    breaker: BreakerConfig = Field(default_factory=BreakerConfig)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)  # model name → price per million tokens
    show_thinking: bool = False  # reasoning the model streams is kept out of the answer; on: shown before it

    @field_validator("chains")
    @classmethod
    def _chains_not_empty(cls, chains: dict[str, list[LinkConfig]]) -> dict[str, list[LinkConfig]]:
        empty = [name for name, links in chains.items() if not links]
        if empty:
            raise ValueError(f"chain {empty[0]!r} has no links")
        return chains


class BudgetLimit(Section):
    daily: float | None = Field(default=None, ge=0)  # per UTC day
    monthly: float | None = Field(default=None, ge=0)  # per UTC calendar month


class BudgetsConfig(Section):
    """Quotas per user, per chat and per agent: each model request reserves its estimate first, in one
    conditional statement, and settles what it really used after; a request that does not fit is refused."""

    unit: Literal["money", "tokens"] = "money"  # money: by llm.prices; tokens: prompt + completion
    user: BudgetLimit = Field(default_factory=BudgetLimit)
    chat: BudgetLimit = Field(default_factory=BudgetLimit)
    agent: BudgetLimit = Field(default_factory=BudgetLimit)  # everything the (default) agent answers
    admins_exempt: bool = True  # admins are neither refused nor counted against the quotas
    warn_at: float = Field(default=0.8, gt=0, le=1)  # share of a quota that earns one soft warning a period
    reserve_output_tokens: int = Field(default=512, ge=0)  # the answer's part of a request's estimate

    @property
    def active(self) -> bool:
        return any(limit is not None for scope in (self.user, self.chat, self.agent)
                   for limit in (scope.daily, scope.monthly))
