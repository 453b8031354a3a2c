"""Feedback on answers (the 👍/👎 under an answer, where the platform draws them): one rating per person per
answer, replaced by their next press, kept on the answer's node so the dashboard's tree shows each answer's
counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# the SQL both backends share ({p} is the placeholder's spelling: numbered, `?1` or `$1`). A rating: the answer is
# looked up in the tree and the rating upserted in one statement (chat, conversation, message, person, good, at).
RATE = """INSERT INTO feedback (chat, conversation_id, message_id, person, good, created_at)
          SELECT chat, conversation_id, id, {p}4, {p}5, {p}6 FROM messages
          WHERE chat = {p}1 AND conversation_id = {p}2 AND id = {p}3 AND role = 'assistant'
          ON CONFLICT (chat, conversation_id, message_id, person) DO UPDATE SET good = excluded.good,
                                                                              created_at = excluded.created_at"""
# the tally of one conversation's answers
TALLIES = """SELECT message_id, SUM(CASE WHEN good THEN 1 ELSE 0 END), SUM(CASE WHEN good THEN 0 ELSE 1 END)
             FROM feedback WHERE chat = {p}1 AND conversation_id = {p}2 GROUP BY message_id"""


@dataclass(frozen=True, slots=True)
class Tally:
    up: int
    down: int


class FeedbackStore(Protocol):
    async def rate(self, chat: str, conversation_id: str, message_id: str, person: str, good: bool) -> bool:
        """`person` ("platform:id") rates this answer (their earlier rating of it is replaced); False when the node
        is no answer of this chat's conversation (gone, never stored under that id, another chat's)."""
        ...

    async def tallies(self, chat: str, conversation_id: str) -> dict[str, Tally]:
        """Each rated answer of the conversation (by message id): how many rated it up and down."""
        ...
