"""Branch summaries on PostgreSQL; scoped by chat through the conversation they belong to."""

from __future__ import annotations

from bot.store.postgres.database import Database
from bot.store.summaries import Summary
from bot.tree.model import utc_now

_PUT_SQL = """
INSERT INTO summaries (chat, conversation_id, message_id, content, covered, created_at)
SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (
    SELECT 1 FROM messages WHERE chat = $1 AND conversation_id = $2 AND id = $3)
ON CONFLICT (chat, conversation_id, message_id) DO UPDATE SET content = $4, covered = $5, created_at = $6
RETURNING 1
"""


class PostgresSummaries:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, chat: str, conv_id: str, message_id: str, content: str, covered: int) -> Summary:
        created = utc_now()
        if await self._db.pool.fetchval(_PUT_SQL, chat, conv_id, message_id, content, covered, created) is None:
            raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
        return Summary(message_id, content, covered, created)

    async def of_conversation(self, chat: str, conv_id: str) -> dict[str, Summary]:
        rows = await self._db.pool.fetch("SELECT message_id, content, covered, created_at FROM summaries "
                                         "WHERE chat = $1 AND conversation_id = $2", chat, conv_id)
        return {r[0]: Summary(r[0], r[1], int(r[2]), r[3]) for r in rows}
