"""The dashboard's cross-chat reads, search and audit log: the same answers from every backend."""

from __future__ import annotations

from bot.store import Store
from bot.tree.model import Message


async def conversation(store: Store, chat: str, texts: list[str]) -> tuple[str, list[Message]]:
    """A linear conversation; the messages come back with their parent ids filled in."""
    info = await store.conversations.create(chat)
    messages, parent = [], info.root_id
    for i, text in enumerate(texts):
        messages.append(Message.new("user" if i % 2 == 0 else "assistant", text, parent))
        parent = messages[-1].id
    await store.conversations.append(chat, info.id, messages)
    return info.id, messages


async def test_chats_are_listed_newest_first_with_their_counts_and_filters(store: Store) -> None:
    await conversation(store, "telegram:1", ["old question", "old answer"])
    await conversation(store, "discord:2", ["hello"])
    await conversation(store, "telegram:1", ["newer", "reply", "more"])
    chats = await store.dashboard.list_chats()
    assert [(c.key, c.platform, c.conversations, c.messages) for c in chats] == [
        ("telegram:1", "telegram", 2, 5), ("discord:2", "discord", 1, 1)]
    assert [c.key for c in await store.dashboard.list_chats(platform="discord")] == ["discord:2"]
    assert [c.key for c in await store.dashboard.list_chats(query="NEWER")] == ["telegram:1"]  # a title
    assert [c.key for c in await store.dashboard.list_chats(query="100%")] == []  # wildcards are text
    assert [c.key for c in await store.dashboard.list_chats(limit=1, offset=1)] == ["discord:2"]


async def test_tree_nodes_are_every_message_in_order_with_a_preview(store: Store) -> None:
    conv_id, msgs = await conversation(store, "t:1", ["x" * 500, "short"])
    nodes = await store.dashboard.tree_nodes("t:1", conv_id)
    assert [(n.id, n.number, n.parent_id, n.role, len(n.preview)) for n in nodes] == [
        (msgs[0].id, 1, msgs[0].parent_id, "user", 160), (msgs[1].id, 2, msgs[0].id, "assistant", 5)]
    assert await store.dashboard.tree_nodes("t:2", conv_id) == []  # scoped by chat like everything else


async def test_search_finds_every_word_in_any_language_newest_first(store: Store) -> None:
    await conversation(store, "telegram:1", ["What is the weather in Beijing?", "Sunny."])
    await conversation(store, "feishu:2", ["北京今天的天气怎么样？"])
    await conversation(store, "discord:3", ["The WEATHER channel", "100% sure"])
    hits = await store.dashboard.search_messages("weather")
    assert [h.chat for h in hits] == ["discord:3", "telegram:1"]
    assert [text for text, match in hits[1].snippet if match] == ["weather"]
    assert [h.chat for h in await store.dashboard.search_messages("北京今天")] == ["feishu:2"]
    assert [h.chat for h in await store.dashboard.search_messages("天气")] == ["feishu:2"]  # two characters
    assert [h.chat for h in await store.dashboard.search_messages("weather beijing")] == ["telegram:1"]
    assert [h.chat for h in await store.dashboard.search_messages("weather", platform="telegram")] == ["telegram:1"]
    assert [h.chat for h in await store.dashboard.search_messages("weather", chat="discord:3")] == ["discord:3"]
    assert [h.role for h in await store.dashboard.search_messages("100%")] == ["assistant"]
    assert [h.role for h in await store.dashboard.search_messages("%")] == ["assistant"]  # text, not a wildcard
    assert await store.dashboard.search_messages("_") == []
    assert await store.dashboard.search_messages("   ") == []


async def test_the_audit_log_keeps_actions_newest_first(store: Store) -> None:
    await store.dashboard.add_audit("dashboard", "branch", "t:1 abcd1234", "m1")
    await store.dashboard.add_audit("api", "pair-approve", "telegram", "42")
    entries = await store.dashboard.list_audit()
    assert [(e.actor, e.action, e.target, e.detail) for e in entries] == [
        ("api", "pair-approve", "telegram", "42"), ("dashboard", "branch", "t:1 abcd1234", "m1")]
    assert len(await store.dashboard.list_audit(limit=1)) == 1
