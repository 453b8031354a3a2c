"""What the dashboard changes in a chat, done through the same services the chat commands use, through the
chat's one door (bot/lanes.py: in its lane, on the replica that owns it), and audited."""

from __future__ import annotations

import asyncio

from bot.chats.conversations import ConversationNotFound
from bot.chats.sessions import Session, SessionKey
from bot.commands.services import CommandServices
from bot.lanes import Work
from bot.store.dashboard import DashboardStore
from bot.web.dashboard import chat_key

QUEUE_WAIT = 10.0  # seconds a request waits for the chat's lane before answering "queued"


class NotInChat(LookupError):
    """The conversation or message is not this chat's (or does not exist: the two look the same)."""


async def in_lane(services: CommandServices, key: SessionKey, work: Work) -> bool:
    """Run `work` through the chat's door; True once it is done, False when it still waits after QUEUE_WAIT
    (a running answer, or another replica owns the chat): it runs later. Raises what `work` raised in time."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def job(session: Session) -> None:
        try:
            await work(session)
        except Exception as e:
            if not done.done():
                done.set_exception(e)
            return
        if not done.done():
            done.set_result(None)

    services.lanes.run(key, job)
    try:
        await asyncio.wait_for(asyncio.shield(done), QUEUE_WAIT)
    except TimeoutError:
        done.add_done_callback(lambda f: f.exception())  # retrieved later, never "never retrieved"
        return False
    return True


async def branch_here(services: CommandServices, audit: DashboardStore, actor: str, chat: str, conv_id: str,
                      message_id: str) -> str:
    """Move a chat's cursor to a message, as `/goto` does: switch to its conversation if needed, then move.

    Never races a running answer: "moved" when done, "queued" when it still waits after QUEUE_WAIT (the
    move follows the answer). Raises NotInChat.
    """
    async def move(session: Session) -> None:
        try:
            await services.conversations.ensure(session)
            if session.conversation_id != conv_id:
                await services.conversations.switch(session, conv_id)
            await services.conversations.move_cursor(session, message_id)
        except (KeyError, ConversationNotFound) as e:
            raise NotInChat(message_id) from e

    if not await in_lane(services, chat_key(chat), move):
        await audit.add_audit(actor, "branch-queued", f"{chat} {conv_id}", message_id)
        return "queued"
    await audit.add_audit(actor, "branch", f"{chat} {conv_id}", message_id)
    return "moved"


async def change_settings(services: CommandServices, chat: str, values: dict[str, str]) -> bool:
    """A chat's settings, as its /model and /lang set them, in its lane: the owner's cached session sees them.
    True when saved, False when queued behind a running answer (saved after it)."""
    async def save(session: Session) -> None:
        await services.set_setting(session, **values)

    return await in_lane(services, chat_key(chat), save)
