"""Telegram's native streaming in private chats: sendMessageDraft (Bot API 9.3+) shows a growing answer as an
animated draft, and the hub then sends the whole answer as one sendMessage (which replaces the draft).

A draft costs no message: an answer takes one message of the chat's and the bot's flood budget however long it
streamed. Each answer's drafts share one fresh non-zero draft_id (changes of one draft animate). A refusal — a Bot
API server without the method (404), a chat that takes no drafts (400) — is DraftsRefused, which the hub remembers
for the bot or the chat and streams there by edits, as before.
"""

from __future__ import annotations

import secrets

from telegram.error import BadRequest, InvalidToken

from adapters.telegram.outbound import Outbound
from bot.adapter import DraftsRefused, SendFailed
from bot.messages import ChatRef, SentRef
from bot.replies import Reply

# seconds between one chat's draft updates. Telegram publishes no limit for drafts; 0.3 s (about 3 a second) looks
# smooth and is inside what other bots stream drafts at (250–1000 ms); a 429 on a draft is honoured all the same
DRAFT_INTERVAL = 0.3
DRAFT_LIFE = 30.0  # seconds: "the streamed draft is ephemeral and acts as a temporary 30-second preview"
PREFIX = "draft:"  # a draft's SentRef.message_id: never a message's (those are digits)
MAX_DRAFT_ID = 2**31 - 1


async def show_draft(outbound: Outbound, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef:
    """Show `reply` in the chat's draft: `ref`'s, or a new one under a fresh id."""
    ref = ref or SentRef(chat, f"{PREFIX}{secrets.randbelow(MAX_DRAFT_ID) + 1}", draft=True)
    try:
        await outbound.draft(chat, int(ref.message_id.removeprefix(PREFIX)), reply)
    except SendFailed as e:
        cause = e.__cause__
        if isinstance(cause, InvalidToken):  # 404: no such method here (the token is fine: the bot polls)
            raise DraftsRefused(f"the Bot API has no sendMessageDraft: {cause.message}", everywhere=True) from e
        if isinstance(cause, BadRequest):
            raise DraftsRefused(cause.message, everywhere=False) from e
        raise
    return ref
