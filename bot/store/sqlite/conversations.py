"""Conversations and the message tree on SQLite: append-only rows indexed by (chat, conversation, id) and
(…, parent), so a send costs a few indexed statements whatever the store's size."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.conversations import (
    ID_ATTEMPTS,
    STORED_ROLES,
    ConversationInfo,
    OpenedChat,
    is_conversation_id,
    title_of,
)
from bot.store.settings import ChatSettings
from bot.store.sqlite.codec import iso, now_iso
from bot.store.sqlite.database import Database
from bot.tree.model import Conversation, Message, compact_path, files_from_json, files_to_json, new_id

_NEW_CONV_COLUMNS = "id, chat, root_id, title, role, current_message_id, message_count, created_at, updated_at"
_CONV_COLUMNS = f"{_NEW_CONV_COLUMNS}, archived"
LIVE = "deleted_at IS NULL"  # a soft-deleted conversation is gone for every chat-facing read
_MSG_COLUMNS = ("id, role, parent_id, content, created_at, tool_calls, tool_call_id, author, interrupted, job_id, "
                "number, files, trace_id, author_id")
_CHAIN_SQL = f"""
WITH RECURSIVE chain(mid, depth) AS (
    SELECT :mid, 0
    UNION ALL
    SELECT m.parent_id, chain.depth + 1 FROM messages AS m JOIN chain
        ON m.chat = :chat AND m.conversation_id = :conv AND m.id = chain.mid
)
SELECT {", ".join("m." + c for c in _MSG_COLUMNS.split(", "))} FROM chain JOIN messages AS m
    ON m.chat = :chat AND m.conversation_id = :conv AND m.id = chain.mid
ORDER BY chain.depth DESC
"""
_INSERT_MESSAGE = (
    "INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, tool_calls, tool_call_id, author, "
    "interrupted, created_at, job_id, number, files, trace_id, author_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _info(row: Sequence[Any]) -> ConversationInfo:
    conv_id, chat, root_id, title, role, cursor, count, created, updated, archived = row
    return ConversationInfo(conv_id, chat, root_id, title, role, cursor, count,
                            datetime.fromisoformat(created), datetime.fromisoformat(updated), bool(archived))


def _message(row: Sequence[Any]) -> Message:
    (mid, role, parent, content, created, tool_calls, tool_call_id, author, interrupted, job_id, number, files,
     trace, author_id) = row
    calls = json.loads(tool_calls) if tool_calls is not None else None
    return Message(mid, role, parent, content, datetime.fromisoformat(created), calls, tool_call_id, author,
                   bool(interrupted), job_id, number, files_from_json(files), trace, author_id)


def _conv(db: sqlite3.Connection, chat: str, conv_id: str) -> ConversationInfo | None:
    row = db.execute(f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND id = ? AND {LIVE}",
                     (chat, conv_id)).fetchone()
    return _info(row) if row else None


def _require_conv(db: sqlite3.Connection, chat: str, conv_id: str) -> ConversationInfo:
    info = _conv(db, chat, conv_id)
    if info is None:
        raise KeyError(f"no conversation {conv_id!r} in this chat")
    return info


def _has_message(db: sqlite3.Connection, chat: str, conv_id: str, message_id: str) -> bool:
    sql = "SELECT 1 FROM messages WHERE chat = ? AND conversation_id = ? AND id = ?"
    return db.execute(sql, (chat, conv_id, message_id)).fetchone() is not None


def _free_conv_id(db: sqlite3.Connection, chat: str, wanted: str | None = None) -> str:
    conv_id = wanted if wanted and is_conversation_id(wanted) else new_id()
    while db.execute("SELECT 1 FROM conversations WHERE chat = ? AND id = ?", (chat, conv_id)).fetchone():
        conv_id = new_id()  # deleted ones too: their rows stay until purged
    return conv_id


def _activate(db: sqlite3.Connection, chat: str, conv_id: str) -> None:
    db.execute(
        "INSERT INTO chats (key, active_conversation, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET active_conversation = excluded.active_conversation",
        (chat, conv_id, now_iso()),
    )


def _insert_conv(db: sqlite3.Connection, chat: str, conv_id: str, root_id: str, role: str) -> ConversationInfo:
    now = now_iso()
    db.execute(f"INSERT INTO conversations ({_NEW_CONV_COLUMNS}) VALUES (?, ?, ?, '', ?, ?, 0, ?, ?)",
               (conv_id, chat, root_id, role, root_id, now, now))
    return _require_conv(db, chat, conv_id)


def _create(db: sqlite3.Connection, chat: str, role: str) -> ConversationInfo:
    info = _insert_conv(db, chat, _free_conv_id(db, chat), new_id(), role)
    _activate(db, chat, info.id)
    return info


def move_off(db: sqlite3.Connection, chat: str, conv_id: str) -> None:
    """When `conv_id` is the chat's active conversation, the most recent other visible one (or a new one)
    takes its place: a chat is never left on a conversation it cannot see."""
    row = db.execute("SELECT active_conversation FROM chats WHERE key = ?", (chat,)).fetchone()
    if row is None or row[0] != conv_id:
        return
    other = db.execute(f"SELECT id FROM conversations WHERE chat = ? AND id != ? AND {LIVE} AND archived = 0 "
                       "ORDER BY updated_at DESC, rowid DESC LIMIT 1", (chat, conv_id)).fetchone()
    if other is None:
        _create(db, chat, "default")
    else:
        _activate(db, chat, other[0])


def _insert(db: sqlite3.Connection, info: ConversationInfo, msgs: Sequence[Message], cursor: str,
            keep_numbers: bool = False) -> None:
    """Numbers continue the conversation's (an import keeps the numbers its tree carries); each message
    object learns its number, so a session's cached path can show it."""
    known, parent_default, title = {info.root_id, info.current_message_id}, info.current_message_id, ""
    last = db.execute("SELECT COALESCE(MAX(number), 0) FROM messages WHERE chat = ? AND conversation_id = ?",
                      (info.chat, info.id)).fetchone()[0]
    for msg in msgs:
        if not (keep_numbers and msg.number is not None):
            last = msg.number = last + 1
        parent = msg.parent_id or parent_default
        if msg.role not in STORED_ROLES:
            raise ValueError(f"message {msg.id!r}: role {msg.role!r} is not stored")
        if parent not in known and not _has_message(db, info.chat, info.id, parent):
            raise KeyError(f"message {msg.id!r}: unknown parent {parent!r}")
        calls = json.dumps(msg.tool_calls, ensure_ascii=False) if msg.tool_calls is not None else None
        for attempt in range(ID_ATTEMPTS):
            try:
                db.execute(_INSERT_MESSAGE, (msg.id, info.id, info.chat, parent, msg.role, msg.content, calls,
                                             msg.tool_call_id, msg.author, int(msg.interrupted), iso(msg.created_at),
                                             msg.job_id, msg.number, files_to_json(msg.files), msg.trace_id,
                                             msg.author_id))
                break
            except sqlite3.IntegrityError:
                # Ids are 8 hex (seed 000), so a long conversation can draw one twice; a lone new
                # message has no children yet and simply takes another id.
                if len(msgs) > 1 or attempt == ID_ATTEMPTS - 1:
                    raise ValueError(f"duplicate message id {msg.id!r}") from None
                taken, msg.id = msg.id, new_id()
                cursor = msg.id if cursor == taken else cursor
        known.add(msg.id)
        parent_default = msg.id
        if not title and msg.role == "user":
            title = title_of(msg.content)
    db.execute(
        "UPDATE conversations SET current_message_id = ?, message_count = message_count + ?, "
        "updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE chat = ? AND id = ?",
        (cursor, len(msgs), now_iso(), title, info.chat, info.id),
    )


def _visible(include_archived: bool) -> str:
    return LIVE if include_archived else f"{LIVE} AND archived = 0"


def _chain(db: sqlite3.Connection, chat: str, conv_id: str, message_id: str) -> list[Message]:
    rows = db.execute(_CHAIN_SQL, {"mid": message_id, "chat": chat, "conv": conv_id})
    return compact_path([_message(r) for r in rows])


class SqliteConversations:
    """Each method is one operation on the database thread (one transaction for writes)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, chat: str, role: str = "default") -> ConversationInfo:
        return await self._db.write(lambda db: _create(db, chat, role))

    async def open_chat(self, chat: str) -> OpenedChat:
        def op(db: sqlite3.Connection) -> OpenedChat:
            row = db.execute("SELECT settings, active_conversation FROM chats WHERE key = ?", (chat,)).fetchone()
            settings = ChatSettings.from_stored(json.loads(row[0]) if row else {})
            info = _conv(db, chat, row[1]) if row and row[1] else None
            if info is None:
                info = _create(db, chat, "default")
            path = _chain(db, chat, info.id, info.current_message_id) if info.current_message_id != info.root_id else []
            return OpenedChat(settings, info, path)

        return await self._db.write(op)

    async def get(self, chat: str, conv_id: str) -> ConversationInfo | None:
        return await self._db.read(lambda db: _conv(db, chat, conv_id))

    async def find(self, chat: str, id_prefix: str) -> list[ConversationInfo]:
        prefix = id_prefix.strip().lower()
        if not 1 <= len(prefix) <= 8 or not is_conversation_id(prefix.ljust(8, "0")):
            return []
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND id >= ? AND id < ? AND {LIVE} "
               "ORDER BY id LIMIT 10")
        rows = await self._db.read(lambda db: db.execute(sql, (chat, prefix, prefix + "g")).fetchall())
        return [_info(r) for r in rows]

    async def recent(self, chat: str, limit: int = 20, offset: int = 0,
                     include_archived: bool = False) -> list[ConversationInfo]:
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND {_visible(include_archived)} "
               "ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?")
        rows = await self._db.read(lambda db: db.execute(sql, (chat, max(limit, 0), max(offset, 0))).fetchall())
        return [_info(r) for r in rows]

    async def count(self, chat: str, include_archived: bool = False) -> int:
        sql = f"SELECT COUNT(*) FROM conversations WHERE chat = ? AND {_visible(include_archived)}"
        return int(await self._db.read(lambda db: db.execute(sql, (chat,)).fetchone()[0]))

    async def summaries(self) -> list[tuple[str, int]]:
        sql = f"SELECT chat, COUNT(*) FROM conversations WHERE {LIVE} GROUP BY chat ORDER BY chat"
        return [(chat, int(n)) for chat, n in await self._db.read(lambda db: db.execute(sql).fetchall())]

    async def active(self, chat: str) -> str | None:
        row = await self._db.read(
            lambda db: db.execute("SELECT active_conversation FROM chats WHERE key = ?", (chat,)).fetchone())
        return row[0] if row else None

    async def set_active(self, chat: str, conv_id: str) -> None:
        def op(db: sqlite3.Connection) -> None:
            _require_conv(db, chat, conv_id)
            _activate(db, chat, conv_id)
            db.execute("UPDATE conversations SET archived = 0 WHERE chat = ? AND id = ?", (chat, conv_id))

        await self._db.write(op)

    async def append(self, chat: str, conv_id: str, msgs: Sequence[Message], finishes: int | None = None) -> None:
        def op(db: sqlite3.Connection) -> None:
            _insert(db, _require_conv(db, chat, conv_id), msgs, msgs[-1].id)
            if finishes is not None:
                db.execute("DELETE FROM inbox WHERE id = ?", (finishes,))

        if msgs:
            await self._db.write(op)

    async def attach(self, chat: str, conv_id: str, msgs: Sequence[Message]) -> None:
        def op(db: sqlite3.Connection) -> None:
            info = _require_conv(db, chat, conv_id)
            _insert(db, info, msgs, info.current_message_id)

        if msgs:
            await self._db.write(op)

    async def import_tree(self, chat: str, conv: Conversation, role: str = "default") -> ConversationInfo:
        def op(db: sqlite3.Connection) -> ConversationInfo:
            info = _insert_conv(db, chat, _free_conv_id(db, chat, conv.id), conv.root_id, role)
            stored = [m for m in conv.messages.values() if m.id != conv.root_id]
            if stored:
                _insert(db, info, stored, conv.current_message_id, keep_numbers=True)
            return _require_conv(db, chat, info.id)

        return await self._db.write(op)

    async def set_cursor(self, chat: str, conv_id: str, message_id: str) -> None:
        def op(db: sqlite3.Connection) -> None:
            info = _require_conv(db, chat, conv_id)
            if message_id != info.root_id and not _has_message(db, chat, conv_id, message_id):
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            db.execute("UPDATE conversations SET current_message_id = ? WHERE chat = ? AND id = ?",
                       (message_id, chat, conv_id))

        await self._db.write(op)

    async def chain(self, chat: str, conv_id: str, message_id: str) -> list[Message]:
        def op(db: sqlite3.Connection) -> list[Message]:
            info = _require_conv(db, chat, conv_id)
            if message_id == info.root_id:
                return []
            found = _chain(db, chat, conv_id, message_id)
            if not found:
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            return found

        return await self._db.read(op)

    async def load(self, chat: str, conv_id: str, system_prompt: str) -> Conversation | None:
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = ? AND conversation_id = ? ORDER BY seq"

        def op(db: sqlite3.Connection) -> Conversation | None:
            info = _conv(db, chat, conv_id)
            if info is None:
                return None
            rows = db.execute(sql, (chat, conv_id))
            return Conversation.from_messages(info.id, info.root_id, system_prompt, (_message(r) for r in rows),
                                              info.current_message_id)

        return await self._db.read(op)

    async def message(self, chat: str, conv_id: str, message_id: str) -> Message | None:
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = ? AND conversation_id = ? AND id = ?"
        row = await self._db.read(lambda db: db.execute(sql, (chat, conv_id, message_id)).fetchone())
        return _message(row) if row else None
