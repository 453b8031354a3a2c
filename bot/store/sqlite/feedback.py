"""Feedback on SQLite: a rating is one upsert keyed by (chat, conversation, answer, person), made only when the
answer is in the tree."""

from __future__ import annotations

from bot.store.feedback import TALLIES, Tally
from bot.store.sqlite.codec import iso
from bot.store.sqlite.database import Database
from bot.tree.model import utc_now

_RATE = """INSERT INTO feedback (chat, conversation_id, message_id, person, good, created_at)
           SELECT chat, conversation_id, id, ?, ?, ? FROM messages
           WHERE chat = ? AND conversation_id = ? AND id = ? AND role = 'assistant'
           ON CONFLICT (chat, conversation_id, message_id, person) DO UPDATE SET good = excluded.good,
                                                                               created_at = excluded.created_at"""


class SqliteFeedback:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rate(self, chat: str, conversation_id: str, message_id: str, person: str, good: bool) -> bool:
        values = (person, int(good), iso(utc_now()), chat, conversation_id, message_id)
        return bool(await self._db.write(lambda db: db.execute(_RATE, values).rowcount))

    async def tallies(self, chat: str, conversation_id: str) -> dict[str, Tally]:
        sql = TALLIES.format(p="?")
        rows = await self._db.read(lambda db: db.execute(sql, (chat, conversation_id)).fetchall())
        return {str(m): Tally(int(up), int(down)) for m, up, down in rows}
