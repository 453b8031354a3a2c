"""Per-chat memories: numbering, listing, search and ranking, use counts, deletion — never across chats."""

from __future__ import annotations

from bot.store import Store

A, B = "test:a", "test:b"


async def test_numbers_are_per_chat_and_list_is_oldest_first(store: Store) -> None:
    assert await store.memories.add(A, "fact", "first in a", ["x"]) == 1
    assert await store.memories.add(B, "pref", "first in b") == 1
    assert await store.memories.add(A, "lesson", "second in a", ["y", "标签"]) == 2
    listed = await store.memories.page(A)
    assert [(e.type, e.content, e.tags, e.uses, e.last_used_at) for e in listed] == [
        ("fact", "first in a", ("x",), 0, None), ("lesson", "second in a", ("y", "标签"), 0, None)]
    assert {e.chat for e in listed} == {A}
    assert [e.content for e in await store.memories.page(A, limit=1, offset=1)] == ["second in a"]
    assert await store.memories.page(A, limit=5, offset=2) == []
    assert (await store.memories.count(A), await store.memories.count(B), await store.memories.count("x")) == (2, 1, 0)


async def test_search_is_scoped_by_chat_matches_tags_and_marks_use(store: Store) -> None:
    await store.memories.add(A, "pref", "Likes green tea", ["drinks"])
    await store.memories.add(A, "fact", "Works on the billing service")
    await store.memories.add(B, "pref", "likes tea too")
    found = await store.memories.search(A, "TEA")
    assert [e.content for e in found] == ["Likes green tea"]
    assert found[0].uses == 1 and found[0].last_used_at is not None
    assert [e.content for e in await store.memories.search(A, "drinks")] == ["Likes green tea"]
    assert [e.content for e in await store.memories.search(B, "tea")] == ["likes tea too"]
    assert await store.memories.search(A, "") == []
    assert await store.memories.search(A, "tea", limit=0) == []
    assert await store.memories.search(A, "% _") == []  # LIKE wildcards are matched literally
    stored = {e.content: e.uses for e in await store.memories.page(A)}
    assert stored == {"Likes green tea": 2, "Works on the billing service": 0}
    assert [e.uses for e in await store.memories.page(B)] == [1]


async def test_search_ranks_by_words_matched(store: Store) -> None:
    await store.memories.add(A, "fact", "deploys on fridays")
    await store.memories.add(A, "decision", "billing deploys need a review")
    found = await store.memories.search(A, "billing deploys")
    assert [e.content for e in found] == ["billing deploys need a review", "deploys on fridays"]
    assert [e.content for e in await store.memories.search(A, "deploys", limit=1)] == [
        "billing deploys need a review"]


async def test_top_memories_most_used_then_newest(store: Store) -> None:
    for text in ("old", "popular", "new"):
        await store.memories.add(A, "fact", text)
    await store.memories.search(A, "popular")
    await store.memories.add(B, "fact", "popular elsewhere")
    for _ in range(3):
        await store.memories.search(B, "popular")
    assert [e.content for e in await store.memories.top(A, 10)] == ["popular", "new", "old"]
    assert [e.content for e in await store.memories.top(A, 2)] == ["popular", "new"]
    assert [(e.content, e.uses) for e in await store.memories.top(B, 10)] == [("popular elsewhere", 3)]


async def test_delete_by_number_only_in_own_chat(store: Store) -> None:
    for text in ("one", "two", "three"):
        await store.memories.add(A, "fact", text)
    await store.memories.add(B, "fact", "b's only")
    assert not await store.memories.delete(B, 2)  # a's number 2 does not exist in b
    assert await store.memories.delete(A, 2)
    assert [e.content for e in await store.memories.page(A)] == ["one", "three"]
    for bad in (0, -1, 3, 10**30):
        assert not await store.memories.delete(A, bad)
    assert await store.memories.delete(B, 1)
    assert [e.content for e in await store.memories.page(A)] == ["one", "three"]
    assert await store.memories.add(A, "fact", "four") == 3  # numbers close up after a deletion
