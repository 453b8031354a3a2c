"""Conversations written straight into the store, shaped as the tests need them."""

from __future__ import annotations

from bot.store import ConversationInfo
from bot.store.sqlite import SqliteStore
from bot.tree.model import Conversation, Message, utc_now


async def linear(store: SqliteStore, chat: str, texts: list[str]) -> tuple[ConversationInfo, list[Message]]:
    """A conversation whose messages alternate user/assistant, one after the other."""
    info = await store.conversations.create(chat)
    messages = [Message.new("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(texts)]
    await store.conversations.append(chat, info.id, messages)
    stored = await store.conversations.get(chat, info.id)
    assert stored is not None
    return stored, messages


async def big_tree(store: SqliteStore, chat: str, size: int, branch_every: int = 50,
                   branch_length: int = 10) -> ConversationInfo:
    """A main line with a side branch every `branch_every` messages: `size` messages in all."""
    conv = Conversation("", root_id="f0000000")
    main, count, now = conv.root_id, 0, utc_now()

    def add(role: str, text: str, parent: str) -> str:
        nonlocal count
        msg = conv.add_message(Message(f"{count:08x}", role, parent, text, now))  # unique ids, no draws
        count += 1
        return msg.id

    while count < size:
        main = add("user" if count % 2 == 0 else "assistant", f"main message {count}", main)
        if count % branch_every == 0:
            side = main
            for i in range(min(branch_length, size - count)):
                side = add("user", f"side {count}.{i}", side)
    conv.current_message_id = main
    return await store.conversations.import_tree(chat, conv)
