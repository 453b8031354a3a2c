"""A chat's current branch, page by page, for chat windows that show the conversation so far (the web chat).

Only the asking chat's active conversation is read, through the store's chat-scoped queries, so a page can
never hold another chat's messages. Tool results stay out: a chat window shows what was said, and an answer's
tool calls as the names of the tools it used.
"""

from __future__ import annotations

from bot.chats.sessions import SessionKey
from bot.messages import ChatRef, HistoryMessage, HistoryPage
from bot.store.conversations import ConversationStore
from bot.tree.model import Message

MAX_PAGE = 100  # messages one page may hold, whatever the caller asks


def _shown(message: Message) -> HistoryMessage | None:
    if message.role not in ("user", "assistant"):
        return None
    tools = tuple(str((call.get("function") or {}).get("name", "?")) for call in message.tool_calls or ())
    return HistoryMessage(message.id, message.number or 0, message.role, message.content, message.created_at,
                          message.trace_id, tools, message.interrupted)


class ChatHistory:
    def __init__(self, conversations: ConversationStore) -> None:
        self._conversations = conversations

    async def page(self, chat: ChatRef, before: str | None, limit: int) -> HistoryPage:
        """Up to `limit` messages that lead to the cursor, ending just above `before` (None: at the cursor).

        A `before` no longer on the branch (the cursor moved since) gives an empty page: read again from the end.
        """
        key = SessionKey.at(chat).storage_key
        conv_id = await self._conversations.active(key)
        info = await self._conversations.get(key, conv_id) if conv_id else None
        if info is None:
            return HistoryPage(None, "", (), False)
        path = await self._conversations.chain(key, info.id, info.current_message_id)
        shown = [m for m in map(_shown, path) if m is not None]
        end = len(shown)
        if before is not None:
            end = next((i for i, m in enumerate(shown) if m.id == before), -1)
            if end < 0:
                return HistoryPage(info.id, info.title, (), False)
        start = max(0, end - max(1, min(limit, MAX_PAGE)))
        return HistoryPage(info.id, info.title, tuple(shown[start:end]), start > 0)
