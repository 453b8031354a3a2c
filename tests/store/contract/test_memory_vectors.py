"""Memories ranked by meaning: nearest by cosine among the chat's own embedded memories, never another chat's."""

from __future__ import annotations

import math

from bot.store import Store
from bot.store.memories import CANDIDATES, unit

A, B = "test:a", "test:b"


def axis(i: int, dims: int = 8, lean: float = 0.0) -> list[float]:
    """A unit vector along axis i, leaning a little towards the next axis."""
    v = [0.0] * dims
    v[i], v[(i + 1) % dims] = 1.0, lean
    return unit(v)


async def test_nearest_ranks_by_cosine_marks_use_and_keeps_chats_apart(store: Store) -> None:
    await store.memories.add(A, "fact", "about axis zero", [], axis(0))
    await store.memories.add(A, "fact", "about axis two", [], axis(2))
    await store.memories.add(A, "fact", "about axis one", [], axis(1, lean=0.3))
    await store.memories.add(A, "fact", "no embedding")
    await store.memories.add(B, "fact", "b's axis zero, exactly", [], axis(0))
    found = await store.memories.nearest(A, axis(0, lean=0.5))
    assert [e.content for e in found] == ["about axis zero", "about axis one"]  # axis two is orthogonal
    assert {e.chat for e in found} == {A} and all(e.uses == 1 and e.last_used_at for e in found)
    assert [e.content for e in await store.memories.nearest(B, axis(0))] == ["b's axis zero, exactly"]
    assert await store.memories.nearest("test:none", axis(0)) == []
    assert await store.memories.nearest(A, axis(0), limit=0) == []
    assert [e.content for e in await store.memories.nearest(A, axis(0), limit=1)] == ["about axis zero"]
    assert await store.memories.nearest(A, axis(0, dims=4)) == []  # another model's vectors are not compared
    assert await store.memories.nearest(A, axis(5), min_similarity=0.5) == []
    used = {e.content: e.uses for e in await store.memories.page(A)}
    assert used == {"about axis zero": 2, "about axis two": 0, "about axis one": 1, "no embedding": 0}


async def test_nearest_scans_a_bounded_set_of_newest_memories(store: Store) -> None:
    await store.memories.add(A, "fact", "oldest, beyond the bound", [], axis(3))
    for i in range(CANDIDATES):
        await store.memories.add(A, "fact", f"filler {i}", [], axis(0))
    assert await store.memories.nearest(A, axis(3), min_similarity=0.9) == []
    await store.memories.add(A, "fact", "newest", [], axis(3))
    assert [e.content for e in await store.memories.nearest(A, axis(3), min_similarity=0.9)] == ["newest"]


async def test_embeddings_keep_their_precision(store: Store) -> None:
    vector = unit([math.sin(i) for i in range(1, 65)])
    await store.memories.add(A, "fact", "sines", [], vector)
    found = await store.memories.nearest(A, vector, min_similarity=0.9999)
    assert [e.content for e in found] == ["sines"]

