"""Per-chat long-term memory (seed 003 §4).

A chat's memories are numbered 1..n in the order they were made: that number is what `remember`
answers, `/memory` shows and `/forget` takes, so a chat never sees global row ids (which would reveal
how much other chats remember).
"""

from __future__ import annotations

import functools
import math
import operator
import random
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

MEMORY_TYPES = ("fact", "pref", "decision", "context", "lesson")
MAX_QUERY_WORDS = 8
BIGINT_MAX = 2**63 - 1  # a bigger page or number from a chat command would overflow a database integer
# Recall by meaning looks at a chat's newest CANDIDATES memories with an embedding: a bounded scan, so its cost does
# not grow with how much a chat has remembered (a full scan of 100 000 vectors takes ~200 ms even in sqlite-vec).
# They are ranked first by a SKETCH-float random projection of each embedding (cheap: a 1 536-float embedding is
# 32 times wider), and the best RERANK of those by the whole embedding.
CANDIDATES = 1000
SKETCH = 40
RERANK = 24
MIN_SIMILARITY = 0.2  # cosine below this is not "about" the query: recall answers nothing rather than noise
Vector = Sequence[float]


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    id: int
    chat: str
    type: str
    content: str
    tags: tuple[str, ...]
    uses: int
    created_at: datetime
    last_used_at: datetime | None


class MemoryStore(Protocol):
    async def add(self, chat: str, type: str, content: str, tags: Sequence[str] = (),
                  vector: Vector | None = None) -> int:
        """Store one memory (type and content already validated) with its unit-length embedding, if any;
        returns its number in this chat."""
        ...

    async def nearest(self, chat: str, vector: Vector, limit: int = 10,
                      min_similarity: float = MIN_SIMILARITY) -> list[MemoryEntry]:
        """Of the chat's newest CANDIDATES memories with an embedding, those most similar to the unit
        `vector` (cosine ≥ min_similarity), most similar first; marks them used."""
        ...

    async def search(self, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        """Entries whose content or tags contain any query word (case-insensitive, literally), most
        matching words first, then most used, then newest; marks them used."""
        ...

    async def top(self, chat: str, limit: int = 20) -> list[MemoryEntry]:
        """Most used first, then newest: read every agent turn, so its cost is `limit` rows."""
        ...

    async def page(self, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]:
        """Oldest first: entry i of the result has number offset + i + 1."""
        ...

    async def count(self, chat: str) -> int: ...

    async def delete(self, chat: str, number: int) -> bool:
        """Delete this chat's memory number `number`; False if there is none."""
        ...


def query_words(query: str) -> list[str]:
    return list(dict.fromkeys(query.lower().split()))[:MAX_QUERY_WORDS]


def bounded(value: int) -> int:
    """A limit, offset or number as a database integer: negative is 0, huge is the largest."""
    return min(max(value, 0), BIGINT_MAX)


def unit(vector: Sequence[float]) -> list[float]:
    """The vector scaled to length 1, so a dot product is the cosine; a zero vector stays zero."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [0.0 for _ in vector]


def pack(vector: Vector) -> bytes:
    """float32 little-endian, the layout sqlite-vec reads."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


@functools.lru_cache(maxsize=4)
def _projection(dimensions: int) -> tuple[tuple[float, ...], ...]:
    """SKETCH random directions in `dimensions`-space, the same in every process (seeded by the width)."""
    rng = random.Random(f"bothub-memory-sketch-{dimensions}")
    return tuple(tuple(rng.gauss(0.0, 1.0) for _ in range(dimensions)) for _ in range(SKETCH))


def sketch(vector: Sequence[float]) -> list[float]:
    """The unit vector's random projection to SKETCH floats, unit length again: cosines between sketches
    approximate cosines between the vectors (Johnson-Lindenstrauss), good enough to pick whom to rerank."""
    return unit([sum(map(operator.mul, row, vector)) for row in _projection(len(vector))])
