"""Feedback on PostgreSQL: a rating is one statement (the answer looked up in the tree and the rating upserted
together)."""

from __future__ import annotations

from bot.store.feedback import RATE, TALLIES, Tally
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

_RATE, _TALLIES = RATE.format(p="$"), TALLIES.format(p="$")


class PostgresFeedback:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rate(self, chat: str, conversation_id: str, message_id: str, person: str, good: bool) -> bool:
        status: str = await self._db.pool.execute(_RATE, chat, conversation_id, message_id, person, good, utc_now())
        return status != "INSERT 0 0"

    async def tallies(self, chat: str, conversation_id: str) -> dict[str, Tally]:
        rows = await self._db.pool.fetch(_TALLIES, chat, conversation_id)
        return {str(r[0]): Tally(int(r[1]), int(r[2])) for r in rows}
