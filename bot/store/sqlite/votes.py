"""Duels and votes on SQLite: a vote is one upsert keyed by (chat, duel, voter)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bot.store.sqlite.codec import iso
from bot.store.sqlite.database import Database
from bot.store.votes import TOPICS, By, Entry, WinRate, win_rates_sql
from bot.tree.model import utc_now

_FIND = "SELECT duel, model, agent FROM duels WHERE chat = ? AND conversation_id = ? AND message_id = ?"


class SqliteVotes:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry],
                      topic: str = "") -> None:
        now = iso(utc_now())
        rows = [(chat, conversation_id, duel, e.message_id, e.model, e.agent, topic, place, now)
                for place, e in enumerate(entries)]
        sql = ("INSERT INTO duels (chat, conversation_id, duel, message_id, model, agent, topic, place, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        await self._db.write(lambda db: db.executemany(sql, rows))

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        def op(db: sqlite3.Connection) -> Entry | None:
            found = db.execute(_FIND, (chat, conversation_id, message_id)).fetchone()
            if found is None:
                return None
            db.execute("INSERT INTO votes (chat, duel, voter, message_id, created_at) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT (chat, duel, voter) DO UPDATE SET message_id = excluded.message_id, "
                       "created_at = excluded.created_at", (chat, found[0], voter, message_id, iso(utc_now())))
            return Entry(message_id, str(found[1]), str(found[2]))

        return await self._db.write(op)

    async def rivals(self, chat: str, conversation_id: str, message_id: str) -> list[Entry]:
        rows = await self._db.read(lambda db: db.execute(
            "SELECT d.message_id, d.model, d.agent FROM duels d JOIN duels m ON m.chat = d.chat AND m.duel = d.duel "
            "WHERE m.chat = ? AND m.conversation_id = ? AND m.message_id = ? ORDER BY d.place",
            (chat, conversation_id, message_id)).fetchall())
        return [Entry(str(m), str(model), str(agent)) for m, model, agent in rows]

    async def win_rates(self, limit: int = 20, *, by: By = "model", topic: str | None = None) -> list[WinRate]:
        args = (limit,) if topic is None else (topic, limit)
        sql = win_rates_sql(by, topic is not None, ("?", "?"))
        rows = await self._db.read(lambda db: db.execute(sql, args).fetchall())
        return [WinRate(str(name), int(wins), int(ballots)) for name, wins, ballots in rows]

    async def topics(self, limit: int = 20) -> list[tuple[str, int]]:
        rows = await self._db.read(lambda db: db.execute(TOPICS.format(limit="?"), (limit,)).fetchall())
        return [(str(topic), int(n)) for topic, n in rows]
