"""Feedback on SQLite: a rating is one upsert keyed by (chat, conversation, answer, person), made only when the
answer is in the tree."""

from __future__ import annotations

from bot.store.feedback import RATE, TALLIES, Tally
from bot.store.sqlite.codec import iso
from bot.store.sqlite.database import Database
from bot.tree.model import utc_now

_RATE, _TALLIES = RATE.format(p="?"), TALLIES.format(p="?")


class SqliteFeedback:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rate(self, chat: str, conversation_id: str, message_id: str, person: str, good: bool) -> bool:
        values = (chat, conversation_id, message_id, person, int(good), iso(utc_now()))
        return bool(await self._db.write(lambda db: db.execute(_RATE, values).rowcount))

    async def tallies(self, chat: str, conversation_id: str) -> dict[str, Tally]:
        rows = await self._db.read(lambda db: db.execute(_TALLIES, (chat, conversation_id)).fetchall())
        return {str(m): Tally(int(up), int(down)) for m, up, down in rows}
