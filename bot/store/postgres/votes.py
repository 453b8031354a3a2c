"""Duels and votes on PostgreSQL: a vote is one statement (the duel looked up and the vote upserted together)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.postgres.database import Database
from bot.store.votes import TOPICS, By, Entry, WinRate, win_rates_sql
from bot.tree.model import utc_now

_ENTRY = "FROM duels WHERE chat = $1 AND conversation_id = $2 AND message_id = $3"
_VOTE = f"""INSERT INTO votes (chat, duel, voter, message_id, created_at)
            SELECT chat, duel, $4, message_id, $5 {_ENTRY}
            ON CONFLICT (chat, duel, voter) DO UPDATE SET message_id = excluded.message_id,
                                                          created_at = excluded.created_at
            RETURNING (SELECT ROW(model, agent) {_ENTRY})"""
_RIVALS = """SELECT d.message_id, d.model, d.agent FROM duels d JOIN duels m ON m.chat = d.chat AND m.duel = d.duel
             WHERE m.chat = $1 AND m.conversation_id = $2 AND m.message_id = $3 ORDER BY d.place"""


class PostgresVotes:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry],
                      topic: str = "") -> None:
        now = utc_now()
        await self._db.pool.executemany(
            "INSERT INTO duels (chat, conversation_id, duel, message_id, model, agent, topic, place, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [(chat, conversation_id, duel, e.message_id, e.model, e.agent, topic, place, now)
             for place, e in enumerate(entries)])

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        found = await self._db.pool.fetchval(_VOTE, chat, conversation_id, message_id, voter, utc_now())
        return None if found is None else Entry(message_id, str(found[0]), str(found[1]))

    async def rivals(self, chat: str, conversation_id: str, message_id: str) -> list[Entry]:
        rows = await self._db.pool.fetch(_RIVALS, chat, conversation_id, message_id)
        return [Entry(r[0], r[1], r[2]) for r in rows]

    async def win_rates(self, limit: int = 20, *, by: By = "model", topic: str | None = None) -> list[WinRate]:
        args = (limit,) if topic is None else (topic, limit)
        rows = await self._db.pool.fetch(win_rates_sql(by, topic is not None, ("$1", "$2")), *args)
        return [WinRate(r[0], int(r[1]), int(r[2])) for r in rows]

    async def topics(self, limit: int = 20) -> list[tuple[str, int]]:
        rows = await self._db.pool.fetch(TOPICS.format(limit="$1"), limit)
        return [(r[0], int(r[1])) for r in rows]
