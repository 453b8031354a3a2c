"""The model client the agent talks to: a failover chain over providers of any kind, behind one `stream`.

A link is tried when its provider's breaker admits it; a failure the next link may fix (429, 5xx, timeouts,
connection errors, a refused key; "context too long" only toward a bigger window) moves on. A link that dies
after part of the answer was streamed hands that part to the next link, which is asked to continue it: its
text streams on after the part shown, into the same platform message, and the Completion is the whole answer.
A link that is not the last gives up after `failover_retries` (0: at once), the last one retries `max_retries`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from bot.agent import anthropic, gemini
from bot.agent.anthropic import AnthropicMessages
from bot.agent.chains import FAILOVER_KINDS, Chains, Link, moves_on, provider_configs
from bot.agent.embeddings import Embed, provider_embedder
from bot.agent.events import FailureKind
from bot.agent.gemini import GeminiContents
from bot.agent.health import Breaker, ProviderHealth
from bot.agent.http1 import multipart
from bot.agent.modelapi import Completion, Failover, ModelAPI, StreamItem, TextChunk, Usage
from bot.agent.openai_chat import OpenAIChat
from bot.agent.prices import cost
from bot.agent.provider import LLMError, Provider
from bot.llmconfig import LLMConfig, ProviderConfig
from bot.ops.providers import HealthView

log = logging.getLogger("bothub.llm")


def endpoint(cfg: ProviderConfig, timeout: float, max_retries: int, env: Mapping[str, str] | None = None) -> Provider:
    """The HTTP side of a provider, with its kind's auth headers and public URL, through the proxy `env` names."""
    if cfg.kind == "anthropic":
        return Provider(cfg.base_url, cfg.api_keys, timeout, max_retries, anthropic.auth, anthropic.DEFAULT_URL,
                        env=env)
    if cfg.kind == "gemini":
        return Provider(cfg.base_url, cfg.api_keys, timeout, max_retries, gemini.auth, gemini.DEFAULT_URL, env=env)
    return Provider(cfg.base_url, cfg.api_keys, timeout, max_retries, env=env)


def make_api(cfg: ProviderConfig, llm: LLMConfig, env: Mapping[str, str] | None = None) -> ModelAPI:
    provider = endpoint(cfg, llm.timeout, llm.max_retries, env)
    if cfg.kind == "anthropic":
        return AnthropicMessages(provider, cfg, llm.temperature)
    if cfg.kind == "gemini":
        return GeminiContents(provider, cfg, llm.temperature)
    return OpenAIChat(provider, llm.temperature)


class LLMClient:
    def __init__(self, cfg: LLMConfig, clock: Callable[[], float] = time.monotonic,
                 on_usage: Callable[[str, Usage], None] | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        """`env`: the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY); none: direct connections."""
        self._cfg = cfg
        self.apis = {name: make_api(provider, cfg, env) for name, provider in provider_configs(cfg).items()}
        self.health = {name: ProviderHealth(name, Breaker(cfg.breaker.failures, cfg.breaker.cooldown, clock))
                       for name in self.apis}
        self.chains = Chains(cfg)
        self.total_usage = Usage()  # across all calls: /metrics shows it (bothub_llm_tokens)
        self.total_cost = 0.0  # money by the price table across all calls (bothub_llm_cost)
        self.on_usage = on_usage  # (model, usage) per call: the overview

    async def close(self) -> None:
        await asyncio.gather(*(api.close() for api in self.apis.values()))

    def health_views(self) -> list[HealthView]:
        """The providers some chain uses (an unused derived `default` is left out)."""
        used = {link.provider for link in self.chains.links()}
        return [health.view() for name, health in self.health.items() if name in used]

    def transcriber(self, model: str | None) -> Callable[[Path], Awaitable[str]] | None:
        """A voice-to-text function on the default provider's /audio/transcriptions, or None without a model."""
        api = self.apis["default"]
        if not model or not isinstance(api, OpenAIChat):
            return None
        provider = api.provider

        async def transcribe(path: Path) -> str:
            audio = await asyncio.to_thread(path.read_bytes)
            form, content_type = multipart({"model": model, "response_format": "text"}, "file", path.name, audio)
            async with provider.post("/audio/transcriptions", form, content_type) as response:
                return await response.text()

        return transcribe

    def embedder(self, model: str | None) -> Embed | None:
        """A text-to-vector function on the default provider's /embeddings, or None without a model."""
        api = self.apis["default"]
        if not model or not isinstance(api, OpenAIChat):
            return None
        return provider_embedder(api.provider, model)

    def speaker(self, model: str | None, voice: str) -> Callable[[str], Awaitable[tuple[bytes, str]]] | None:
        """A text-to-speech function on the default provider's /audio/speech (Opus asked for), or None without a
        model."""
        api = self.apis["default"]
        if not model or not isinstance(api, OpenAIChat):
            return None
        provider = api.provider

        async def speak(text: str) -> tuple[bytes, str]:
            body = json.dumps({"model": model, "input": text, "voice": voice, "response_format": "opus"}).encode()
            async with provider.post("/audio/speech", body) as response:
                return await response.read(), response.headers.get("content-type", "")

        return speak

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str
                     ) -> AsyncIterator[StreamItem | Failover]:
        """Chunks as they arrive, then exactly one Completion (a Failover before each link given up on);
        raises LLMError, naming the last link tried, when the whole chain failed."""
        chain = self.chains.resolve(model)
        error: LLMError | None = None
        failed: Link | None = None
        skipped: list[Link] = []
        said = ""  # what links that died mid-answer streamed: the next one continues it
        for index, link in enumerate(chain):
            if error is not None and failed is not None and not moves_on(error.kind, failed, link):
                continue
            if not self.health[link.provider].breaker.admit():
                skipped.append(link)
                continue
            rest = [other for other in chain[index + 1:] if self.health[other.provider].breaker.state != "open"]
            try:
                async for item in self._try(link, continued(messages, said), tools, rest):
                    yield dataclasses.replace(item, text=said + item.text) if isinstance(item, Completion) else item
                return
            except _MovedOn as moved:
                error, failed = moved.error, link
                said += moved.said
                yield moved.failover
        if error is None and skipped:  # every breaker is open: the first link is asked anyway, as a probe
            async for item in self._try(skipped[0], messages, tools, []):
                yield item
            return
        assert error is not None
        raise error

    async def _try(self, link: Link, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                   rest: list[Link]) -> AsyncIterator[StreamItem]:
        """One link; raises _MovedOn when it failed before anything was shown and a link in `rest` may answer."""
        health = self.health[link.provider]
        started = time.monotonic()
        settled = False
        said: list[str] = []  # the text streamed so far
        try:
            stream = self.apis[link.provider].stream(messages, tools, link.model,
                                                     self._cfg.failover_retries if rest else None)
            async for item in stream:
                if isinstance(item, Completion):
                    settled = True
                    health.record_success(item.first_token)
                    yield self._settled(link, item)
                else:
                    if isinstance(item, TextChunk):
                        said.append(item.text)
                    yield item
        except LLMError as e:
            settled = True
            e.model = link.label
            health.record_failure(e.kind, e.kind in FAILOVER_KINDS)
            # a context error mid-answer cannot be: the provider counted the prompt before it streamed
            if not any(moves_on(e.kind, link, other) for other in rest):
                raise
            seconds = time.monotonic() - started
            log.warning("model %s failed (%s) after %.2f s and %d characters; the next link %s: %s", link.label,
                        e.kind, seconds, sum(map(len, said)), "continues" if said else "answers", e.detail)
            raise _MovedOn(e, Failover(link.label, e.kind, seconds, bool(said)), "".join(said)) from e
        finally:
            if not settled:  # cancelled, or a bug: a half-open probe must not stay in flight forever
                health.breaker.abandon()

    def _settled(self, link: Link, completion: Completion) -> Completion:
        usage = completion.usage
        if usage is not None:
            self.total_usage += usage
            if self.on_usage is not None:
                self.on_usage(link.model, usage)
        price = cost(self._cfg.prices, link.model, usage) if usage is not None else None
        self.total_cost += price or 0.0
        return dataclasses.replace(completion, model=link.label, cost=price)

    async def complete(self, messages: list[dict[str, Any]], model: str) -> str:
        """The whole text of one answer without tools (summaries, titles); raises LLMError on failure."""
        async for item in self.stream(messages, None, model):
            if isinstance(item, Completion):
                return item.text
        raise LLMError(FailureKind.OTHER, "the stream ended without a completion")  # stream() always ends with one


class _MovedOn(Exception):
    def __init__(self, error: LLMError, failover: Failover, said: str) -> None:
        super().__init__(error.detail)
        self.error, self.failover, self.said = error, failover, said


CONTINUE = ("Your answer above was cut off by a network failure. Continue it from exactly where it stops, "
            "mid-word if need be: do not repeat any of it and do not mention the interruption.")


def continued(messages: list[dict[str, Any]], said: str) -> list[dict[str, Any]]:
    """The request for a link that continues an answer another link began: the part shown as the assistant's
    own turn, then the request to go on. (A bare assistant prefix is not portable: OpenAI-compatible servers
    mostly answer it anew; a user turn after it works on every wire protocol.)"""
    if not said:
        return messages
    return [*messages, {"role": "assistant", "content": said}, {"role": "user", "content": CONTINUE}]
