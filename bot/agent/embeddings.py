"""Text to vectors on the provider's OpenAI-style `/embeddings` (llm.embedding_model): what lets `recall` find
a memory by meaning. Vectors come back unit length, so the stores rank them by a dot product."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from bot.agent.events import FailureKind
from bot.agent.provider import LLMError, Provider
from bot.store.memories import unit

Embed = Callable[[str], Awaitable[list[float]]]
MAX_INPUT = 8000  # characters sent for one text: a memory is at most 2 000, a query far less


def provider_embedder(provider: Provider, model: str) -> Embed:
    """One text's unit-length embedding by `model`; raises LLMError when the provider fails or answers oddly."""

    async def embed(text: str) -> list[float]:
        body = json.dumps({"model": model, "input": [text[:MAX_INPUT]], "encoding_format": "float"}).encode()
        async with provider.post("/embeddings", body) as response:
            raw = await response.read()
        try:
            vector = json.loads(raw)["data"][0]["embedding"]
            if not vector or not all(isinstance(x, int | float) for x in vector):
                raise ValueError("not a list of numbers")
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise LLMError(FailureKind.OTHER, f"unexpected /embeddings answer: {e}") from e
        return unit([float(x) for x in vector])

    return embed
