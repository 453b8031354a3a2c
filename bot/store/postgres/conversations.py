"""Conversations and the message tree on PostgreSQL: the same indexed shape as on SQLite. A chat's
conversation is created under a transaction-level advisory lock on the chat, so two first messages at
once still make one conversation."""

from __future__ import annotations

import json
from collections.abc import Sequence

import asyncpg

from bot.store.conversations import (
    STORED_ROLES,
    ConversationInfo,
    OpenedChat,
    is_conversation_id,
    title_of,
)
from bot.store.postgres.claims import Fence, Guard
from bot.store.postgres.database import Database
from bot.store.settings import ChatSettings
from bot.tree.model import Conversation, Message, compact_path, files_from_json, files_to_json, new_id, utc_now

_NEW_CONV_COLUMNS = "id, chat, root_id, title, role, current_message_id, message_count, created_at, updated_at"
_CONV_COLUMNS = f"{_NEW_CONV_COLUMNS}, archived"
LIVE = "deleted_at IS NULL"  # a soft-deleted conversation is gone for every chat-facing read
_MSG_COLUMNS = ("id, role, parent_id, content, created_at, tool_calls, tool_call_id, author, interrupted, job_id, "
                "number, files, trace_id, author_id")
_CHAIN_SQL = f"""
WITH RECURSIVE chain(mid, depth) AS (
    SELECT $3::text, 0
    UNION ALL
    SELECT m.parent_id, chain.depth + 1 FROM messages AS m JOIN chain
        ON m.chat = $1 AND m.conversation_id = $2 AND m.id = chain.mid
)
SELECT {", ".join("m." + c for c in _MSG_COLUMNS.split(", "))} FROM chain JOIN messages AS m
    ON m.chat = $1 AND m.conversation_id = $2 AND m.id = chain.mid
ORDER BY chain.depth DESC
"""
_INSERT_CONV = (f"INSERT INTO conversations ({_NEW_CONV_COLUMNS}) VALUES ($1, $2, $3, '', $4, $3, 0, $5, $5) "
                f"ON CONFLICT DO NOTHING RETURNING {_CONV_COLUMNS}")
_ACTIVATE = ("INSERT INTO chats (key, active_conversation) VALUES ($1, $2) "
             "ON CONFLICT (key) DO UPDATE SET active_conversation = excluded.active_conversation")


def _info(row: asyncpg.Record) -> ConversationInfo:
    return ConversationInfo(*row)


def _message(row: asyncpg.Record) -> Message:
    (mid, role, parent, content, created, tool_calls, tool_call_id, author, interrupted, job_id, number, files,
     trace, author_id) = row
    return Message(mid, role, parent, content, created, tool_calls, tool_call_id, author, interrupted, job_id,
                   number, files_from_json(files), trace, author_id)


async def _conv(db: asyncpg.Connection, chat: str, conv_id: str, lock: bool = False) -> ConversationInfo | None:
    sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = $1 AND id = $2 AND {LIVE}"
           + (" FOR UPDATE" if lock else ""))
    row = await db.fetchrow(sql, chat, conv_id)
    return _info(row) if row else None


async def _require_conv(db: asyncpg.Connection, chat: str, conv_id: str, lock: bool = False) -> ConversationInfo:
    info = await _conv(db, chat, conv_id, lock)
    if info is None:
        raise KeyError(f"no conversation {conv_id!r} in this chat")
    return info


async def _has_message(db: asyncpg.Connection, chat: str, conv_id: str, message_id: str) -> bool:
    sql = "SELECT 1 FROM messages WHERE chat = $1 AND conversation_id = $2 AND id = $3"
    return await db.fetchval(sql, chat, conv_id, message_id) is not None


async def _insert_conv(db: asyncpg.Connection, chat: str, root_id: str, role: str, wanted: str | None = None
                       ) -> ConversationInfo:
    conv_id = wanted if wanted and is_conversation_id(wanted) else new_id()
    while (row := await db.fetchrow(_INSERT_CONV, conv_id, chat, root_id, role, utc_now())) is None:
        conv_id = new_id()  # taken in this chat
    return _info(row)


async def _create(db: asyncpg.Connection, chat: str, role: str) -> ConversationInfo:
    info = await _insert_conv(db, chat, new_id(), role)
    await db.execute(_ACTIVATE, chat, info.id)
    return info


async def move_off(db: asyncpg.Connection, chat: str, conv_id: str) -> None:
    """When `conv_id` is the chat's active conversation, the most recent other visible one (or a new one)
    takes its place: a chat is never left on a conversation it cannot see."""
    if await db.fetchval("SELECT active_conversation FROM chats WHERE key = $1", chat) != conv_id:
        return
    other = await db.fetchval(f"SELECT id FROM conversations WHERE chat = $1 AND id != $2 AND {LIVE} AND NOT archived "
                              "ORDER BY updated_at DESC, seq DESC LIMIT 1", chat, conv_id)
    if other is None:
        await _create(db, chat, "default")
    else:
        await db.execute(_ACTIVATE, chat, other)


def _visible(include_archived: bool) -> str:
    return LIVE if include_archived else f"{LIVE} AND NOT archived"


# The fence first (schema_replicas.py): refused, the statement writes nothing.
_APPEND = ("SELECT a.message_id, a.message_number FROM bothub_fence($21, $22) AS f CROSS JOIN LATERAL bothub_append("
           + ", ".join(f"${i}" for i in range(1, 21)) + ") AS a")


async def _insert(db: asyncpg.Connection | asyncpg.Pool, chat: str, conv_id: str, msgs: Sequence[Message],
                  cursor: str | None = None, finishes: int | None = None, keep_numbers: bool = False,
                  fence: Fence = None) -> None:
    """One round trip (`bothub_append`, migrations 9 and 11): numbers continue the conversation's (an import keeps its
    tree's), and each message object learns its number and, if its id was taken, its new id."""
    for msg in msgs:
        if msg.role not in STORED_ROLES:
            raise ValueError(f"message {msg.id!r}: role {msg.role!r} is not stored")
    title = next((title_of(m.content) for m in msgs if m.role == "user"), "")
    columns = ([m.id for m in msgs], [m.parent_id for m in msgs], [m.role for m in msgs], [m.content for m in msgs],
               [json.dumps(m.tool_calls, ensure_ascii=False) if m.tool_calls is not None else None for m in msgs],
               [m.tool_call_id for m in msgs], [m.author for m in msgs], [m.interrupted for m in msgs],
               [m.created_at for m in msgs], [m.job_id for m in msgs],
               [m.number if keep_numbers else None for m in msgs], [files_to_json(m.files) for m in msgs],
               [m.trace_id for m in msgs], [m.author_id for m in msgs])
    try:
        rows = await db.fetch(_APPEND, chat, conv_id, cursor, title, utc_now(), finishes, *columns,
                              *(fence if fence is not None else (None, None)))
    except (asyncpg.NoDataFoundError, asyncpg.ForeignKeyViolationError) as e:
        raise KeyError(str(e)) from None
    except asyncpg.UniqueViolationError as e:
        raise ValueError(str(e)) from None
    for msg, (mid, number) in zip(msgs, rows, strict=True):
        msg.id, msg.number = mid, number


async def _chain(db: asyncpg.Connection, chat: str, conv_id: str, message_id: str) -> list[Message]:
    return compact_path([_message(r) for r in await db.fetch(_CHAIN_SQL, chat, conv_id, message_id)])


class PostgresConversations:
    def __init__(self, db: Database, guard: Guard) -> None:
        self._db = db
        self._guard = guard  # refuses a stale owner's writes (fenced by the partition's epoch): it writes nothing

    async def create(self, chat: str, role: str = "default") -> ConversationInfo:
        async with self._db.pool.acquire() as db, db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", chat)
            return await _create(db, chat, role)

    async def open_chat(self, chat: str) -> OpenedChat:
        async with self._db.pool.acquire() as db, db.transaction():
            row = await db.fetchrow("SELECT settings, active_conversation FROM chats WHERE key = $1", chat)
            info = await _conv(db, chat, row[1]) if row and row[1] else None
            if info is None:
                await db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", chat)
                active = await db.fetchval("SELECT active_conversation FROM chats WHERE key = $1", chat)
                info = await _conv(db, chat, active) if active else None  # made while we waited for the lock
                info = info or await _create(db, chat, "default")
            path = await _chain(db, chat, info.id, info.current_message_id) if (
                info.current_message_id != info.root_id) else []
            return OpenedChat(ChatSettings.from_stored(row[0] if row else {}), info, path)

    async def get(self, chat: str, conv_id: str) -> ConversationInfo | None:
        async with self._db.pool.acquire() as db:
            return await _conv(db, chat, conv_id)

    async def find(self, chat: str, id_prefix: str) -> list[ConversationInfo]:
        prefix = id_prefix.strip().lower()
        if not 1 <= len(prefix) <= 8 or not is_conversation_id(prefix.ljust(8, "0")):
            return []
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = $1 AND id >= $2 AND id < $3 AND {LIVE} "
               "ORDER BY id LIMIT 10")
        return [_info(r) for r in await self._db.pool.fetch(sql, chat, prefix, prefix + "g")]

    async def recent(self, chat: str, limit: int = 20, offset: int = 0,
                     include_archived: bool = False) -> list[ConversationInfo]:
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = $1 AND {_visible(include_archived)} "
               "ORDER BY updated_at DESC, seq DESC LIMIT $2 OFFSET $3")
        return [_info(r) for r in await self._db.pool.fetch(sql, chat, max(limit, 0), max(offset, 0))]

    async def count(self, chat: str, include_archived: bool = False) -> int:
        sql = f"SELECT COUNT(*) FROM conversations WHERE chat = $1 AND {_visible(include_archived)}"
        return int(await self._db.pool.fetchval(sql, chat))

    async def summaries(self) -> list[tuple[str, int]]:
        sql = f"SELECT chat, COUNT(*) FROM conversations WHERE {LIVE} GROUP BY chat ORDER BY chat"
        return [(chat, int(n)) for chat, n in await self._db.pool.fetch(sql)]

    async def active(self, chat: str) -> str | None:
        value = await self._db.pool.fetchval("SELECT active_conversation FROM chats WHERE key = $1", chat)
        return str(value) if value is not None else None

    async def set_active(self, chat: str, conv_id: str) -> None:
        async with self._db.pool.acquire() as db, db.transaction():
            await _require_conv(db, chat, conv_id)
            await db.execute(_ACTIVATE, chat, conv_id)
            await db.execute("UPDATE conversations SET archived = false WHERE chat = $1 AND id = $2", chat, conv_id)

    async def append(self, chat: str, conv_id: str, msgs: Sequence[Message], finishes: int | None = None) -> None:
        if msgs:
            await self._guard(chat, lambda fence: _insert(self._db.pool, chat, conv_id, msgs, finishes=finishes,
                                                          fence=fence))

    async def attach(self, chat: str, conv_id: str, msgs: Sequence[Message]) -> None:
        async def write(fence: Fence) -> None:
            async with self._db.pool.acquire() as db, db.transaction():  # the cursor read and kept under its row lock
                info = await _require_conv(db, chat, conv_id, lock=True)
                await _insert(db, chat, conv_id, msgs, info.current_message_id, fence=fence)

        if msgs:
            await self._guard(chat, write)

    async def import_tree(self, chat: str, conv: Conversation, role: str = "default") -> ConversationInfo:
        async with self._db.pool.acquire() as db, db.transaction():
            info = await _insert_conv(db, chat, conv.root_id, role, conv.id)
            stored = [m for m in conv.messages.values() if m.id != conv.root_id]
            if stored:
                await _insert(db, chat, info.id, stored, conv.current_message_id, keep_numbers=True)
            return await _require_conv(db, chat, info.id)

    async def set_cursor(self, chat: str, conv_id: str, message_id: str) -> None:
        async with self._db.pool.acquire() as db, db.transaction():
            info = await _require_conv(db, chat, conv_id, lock=True)
            if message_id != info.root_id and not await _has_message(db, chat, conv_id, message_id):
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            await db.execute("UPDATE conversations SET current_message_id = $1 WHERE chat = $2 AND id = $3",
                             message_id, chat, conv_id)

    async def chain(self, chat: str, conv_id: str, message_id: str) -> list[Message]:
        async with self._db.pool.acquire() as db:
            info = await _require_conv(db, chat, conv_id)
            if message_id == info.root_id:
                return []
            found = await _chain(db, chat, conv_id, message_id)
            if not found:
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            return found

    async def load(self, chat: str, conv_id: str, system_prompt: str) -> Conversation | None:
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = $1 AND conversation_id = $2 ORDER BY seq"
        async with self._db.pool.acquire() as db, db.transaction(isolation="repeatable_read", readonly=True):
            info = await _conv(db, chat, conv_id)
            if info is None:
                return None
            rows = await db.fetch(sql, chat, conv_id)
        return Conversation.from_messages(info.id, info.root_id, system_prompt, (_message(r) for r in rows),
                                          info.current_message_id)

    async def message(self, chat: str, conv_id: str, message_id: str) -> Message | None:
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = $1 AND conversation_id = $2 AND id = $3"
        row = await self._db.pool.fetchrow(sql, chat, conv_id, message_id)
        return _message(row) if row else None
