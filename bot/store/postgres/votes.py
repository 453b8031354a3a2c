"""Duels and votes on PostgreSQL: a vote is one statement (the duel looked up and the vote upserted together)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.postgres.database import Database
from bot.store.votes import WIN_RATES, Entry, WinRate
from bot.tree.model import utc_now

_ENTRY = "FROM duels WHERE chat = $1 AND conversation_id = $2 AND message_id = $3"
_VOTE = f"""INSERT INTO votes (chat, duel, voter, message_id, created_at)
            SELECT chat, duel, $4, message_id, $5 {_ENTRY}
            ON CONFLICT (chat, duel, voter) DO UPDATE SET message_id = excluded.message_id,
                                                          created_at = excluded.created_at
            RETURNING (SELECT model {_ENTRY})"""


class PostgresVotes:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry]) -> None:
        now = utc_now()
        await self._db.pool.executemany(
            "INSERT INTO duels (chat, conversation_id, duel, message_id, model, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6)", [(chat, conversation_id, duel, e.message_id, e.model, now)
                                                for e in entries])

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        model = await self._db.pool.fetchval(_VOTE, chat, conversation_id, message_id, voter, utc_now())
        return None if model is None else Entry(message_id, str(model))

    async def win_rates(self, limit: int = 20) -> list[WinRate]:
        rows = await self._db.pool.fetch(WIN_RATES.format(limit='$1'), limit)
        return [WinRate(r[0], int(r[1]), int(r[2])) for r in rows]
