"""Where a partial answer is a draft (an adapter that is `Drafting`): one-to-one chats, unless the platform refused.

A draft is an ephemeral preview outside the message budgets, so the pacer never sees it; the stream's draft interval
paces it, and a 429 on a draft holds that chat's drafts for as long as the platform asked. A refusal is remembered
for the chat, or for every chat of the adapter, and partial answers there are messages, edited, from then on.
"""

from __future__ import annotations

import time

from bot.adapter import Adapter, Drafting
from bot.messages import ChatRef


class DraftRules:
    def __init__(self, adapter: Adapter) -> None:
        self.drafter = adapter if isinstance(adapter, Drafting) else None
        self.interval = self.drafter.draft_interval if self.drafter is not None else None
        self._on = self.drafter is not None
        self._refused: set[str] = set()  # chats where the platform refused a draft
        self._held: dict[str, float] = {}  # chat → no draft before this monotonic time (a 429)

    def wanted(self, chat: ChatRef) -> bool:
        """A partial answer into `chat` goes as a draft: a one-to-one chat where drafts were not refused."""
        return self._on and not chat.is_group and chat.chat_id not in self._refused

    def held(self, chat: ChatRef) -> bool:
        until = self._held.get(chat.chat_id)
        if until is None:
            return False
        if time.monotonic() < until:
            return True
        del self._held[chat.chat_id]
        return False

    def hold(self, chat: ChatRef, seconds: float) -> None:
        self._held[chat.chat_id] = time.monotonic() + seconds

    def refused(self, chat: ChatRef, everywhere: bool) -> None:
        if everywhere:
            self._on = False
        else:
            self._refused.add(chat.chat_id)
