"""Duels and votes on SQLite: a vote is one upsert keyed by (chat, duel, voter)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bot.store.sqlite.codec import iso
from bot.store.sqlite.database import Database
from bot.store.votes import WIN_RATES, Entry, WinRate
from bot.tree.model import utc_now


class SqliteVotes:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry]) -> None:
        rows = [(chat, conversation_id, duel, e.message_id, e.model, iso(utc_now())) for e in entries]
        sql = "INSERT INTO duels (chat, conversation_id, duel, message_id, model, created_at) VALUES (?, ?, ?, ?, ?, ?)"
        await self._db.write(lambda db: db.executemany(sql, rows))

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        def op(db: sqlite3.Connection) -> Entry | None:
            found = db.execute("SELECT duel, model FROM duels WHERE chat = ? AND conversation_id = ? "
                               "AND message_id = ?", (chat, conversation_id, message_id)).fetchone()
            if found is None:
                return None
            db.execute("INSERT INTO votes (chat, duel, voter, message_id, created_at) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT (chat, duel, voter) DO UPDATE SET message_id = excluded.message_id, "
                       "created_at = excluded.created_at", (chat, found[0], voter, message_id, iso(utc_now())))
            return Entry(message_id, str(found[1]))

        return await self._db.write(op)

    async def win_rates(self, limit: int = 20) -> list[WinRate]:
        rows = await self._db.read(lambda db: db.execute(WIN_RATES.format(limit='?'), (limit,)).fetchall())
        return [WinRate(str(model), int(wins), int(ballots)) for model, wins, ballots in rows]
