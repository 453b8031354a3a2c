"""sendMessageDraft on the fake Bot API (Bot API 9.3+): a private chat's ephemeral, animated draft of a message.

Validated as Telegram does: private chats only (a group or channel answers 400), a non-zero integer draft_id, 1–4096
characters of text after entity parsing. A chat shows at most one draft; the bot's next message into the chat
replaces it (`ended`). Drafts are judged apart from messages: they never touch the flood budgets of sendMessage and
editMessageText, and have their own per-chat rate (Telegram publishes none; `DRAFTS_PER_SECOND` is our reading,
which a bot updating a draft every 0.3 s stays under). A draft over it answers 429 and is noted as a breach.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.budgets import SlidingWindows
from tests.fakes.telegram_rules import ApiError, visible_text

DRAFTS_PER_SECOND = 5  # per chat, in any second


@dataclass
class Draft:
    chat_id: int
    draft_id: int
    texts: list[str] = field(default_factory=list)  # what it showed, update by update (visible text)
    became: int | None = None  # the message that replaced it


class DraftMethods:
    """Mixed into FakeTelegram."""

    drafts: list[Draft]  # every draft shown, in the order each began
    _open_drafts: dict[int, Draft]  # chat → the draft it shows now
    draft_window: SlidingWindows

    _chat: Callable[[dict[str, Any]], dict[str, Any]]  # FakeTelegram's: the chat a call names, or 400
    breach: Callable[[str, object], None]  # Judged's
    fail: Callable[..., None]  # FakeTelegram's scripted failures

    def refuse_drafts(self, chat_id: int) -> None:
        """The chat takes no drafts (as a group would not): the bot streams there by a send and edits."""
        self.fail("sendMessageDraft", 400, "Bad Request: TEXTDRAFT_PEER_INVALID", chat_id=chat_id, times=10**6)

    def drafts_in(self, chat_id: int) -> list[Draft]:
        return [d for d in self.drafts if d.chat_id == chat_id]

    async def _m_sendMessageDraft(self, p: dict[str, Any]) -> bool:
        chat = self._chat(p)
        if chat["type"] != "private":
            raise ApiError(400, "Bad Request: TEXTDRAFT_PEER_INVALID")
        draft_id = p.get("draft_id")
        if not isinstance(draft_id, int) or isinstance(draft_id, bool) or draft_id == 0:
            raise ApiError(400, "Bad Request: DRAFT_ID_INVALID")
        if p.get("message_thread_id") is not None and not chat.get("is_forum"):
            raise ApiError(400, "Bad Request: message thread not found")
        text, _ = visible_text(p.get("text"), p.get("parse_mode"))
        if self.draft_window.over(str(chat["id"])):
            self.breach("drafts per chat", chat["id"])
            retry_after = max(1, math.ceil(self.draft_window.free_in(str(chat["id"]))))
            raise ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)
        shown = self._open_drafts.get(chat["id"])
        if shown is None or shown.draft_id != draft_id:
            shown = self._open_drafts[chat["id"]] = Draft(chat["id"], draft_id)
            self.drafts.append(shown)
        shown.texts.append(text)
        return True

    def ended(self, chat_id: int, message_id: int) -> Draft | None:
        """The bot's message `message_id` arrived in the chat: the draft shown there (if any) gives way to it."""
        draft = self._open_drafts.pop(chat_id, None)
        if draft is not None:
            draft.became = message_id
        return draft
