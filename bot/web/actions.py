"""What the dashboard changes, done through the same services the chat commands use, and audited."""

from __future__ import annotations

import asyncio

from bot.chats.conversations import ConversationNotFound
from bot.commands.services import CommandServices
from bot.store.dashboard import DashboardStore
from bot.web.dashboard import chat_key

QUEUE_WAIT = 10.0  # seconds a request waits for the chat's lane before answering "queued"


class NotInChat(LookupError):
    """The conversation or message is not this chat's (or does not exist: the two look the same)."""


async def branch_here(services: CommandServices, audit: DashboardStore, actor: str, chat: str, conv_id: str,
                      message_id: str) -> str:
    """Move a chat's cursor to a message, as `/goto` does: switch to its conversation if needed, then move.

    Runs in the chat's lane, so it never races a running answer: "moved" when done, "queued" when the
    chat is still answering after QUEUE_WAIT (the move follows the answer). Raises NotInChat.
    """
    key = chat_key(chat)
    session = services.sessions.get(key)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def job() -> None:
        try:
            await services.conversations.ensure(session)
            if session.conversation_id != conv_id:
                await services.conversations.switch(session, conv_id)
            await services.conversations.move_cursor(session, message_id)
        except Exception as e:
            if not done.done():
                done.set_exception(NotInChat(message_id) if isinstance(e, KeyError | ConversationNotFound) else e)
            return
        if not done.done():
            done.set_result(None)

    services.sessions.lane(key).submit(job)
    try:
        await asyncio.wait_for(asyncio.shield(done), QUEUE_WAIT)
    except TimeoutError:
        done.add_done_callback(lambda f: f.exception())  # retrieved later, never "never retrieved"
        await audit.add_audit(actor, "branch-queued", f"{chat} {conv_id}", message_id)
        return "queued"
    await audit.add_audit(actor, "branch", f"{chat} {conv_id}", message_id)
    return "moved"
