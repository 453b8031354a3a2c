"""Conversations written straight into the store, shaped as the tests need them."""

from __future__ import annotations

from bot.i18n import t
from bot.store import ConversationInfo, Trace
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


def run_trace(chat: str, trace_id: str, model: str, tokens: tuple[int, int], ms: int) -> Trace:
    return Trace(trace_id, chat, None, utc_now(), model, "ok", ms, ms // 4, *tokens, (), ())


async def replayed(store: SqliteStore, chat: str, lang: str) -> tuple[ConversationInfo, Message, Message]:
    """A question (#1), its answer (#2) and a replay of it (#3, beside #2, its head as /replay writes it in `lang`),
    each answer with its run's trace."""
    conv = Conversation("", root_id="f0000000")
    question = conv.add_message(Message.new("user", "write the note", conv.root_id))
    original = conv.add_message(Message.new("assistant", "I wrote the note.\nIt says version one.", question.id,
                                            trace_id=f"{chat}-original"))
    head = t(lang, "replay_head", n=original.number, model="beta")
    replay = conv.add_message(Message.new("assistant", f"{head}\n\nI wrote the note.\nIt now says version one.",
                                          question.id, trace_id=f"{chat}-replay"))
    conv.current_message_id = original.id
    await store.traces.add([run_trace(chat, f"{chat}-original", "alpha", (300, 12), 1230),
                            run_trace(chat, f"{chat}-replay", "beta", (280, 15), 870)], keep_per_chat=100)
    return await store.conversations.import_tree(chat, conv), original, replay
