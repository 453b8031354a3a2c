"""Store Protocol + SqliteStore: the only SQL in the repo.

Every query is scoped by chat, so another chat's conversation id behaves exactly like a random one.
Messages are append-only rows; a send costs a few indexed statements, whatever the store's size.
The system prompt is never stored (seed 000): callers pass the current one when loading.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bot.store.sqlite.database import Database
from bot.store.sqlite.memories import MemoryEntry as MemoryEntry
from bot.store.sqlite.memories import MemoryRows, MemoryStore
from bot.store.sqlite.migrations import migrate
from bot.tree.model import Conversation, Message, new_id, utc_now

T = TypeVar("T")
TITLE_MAX = 60
DEDUPE_TTL = 7 * 86400.0
STORED_ROLES = frozenset({"user", "assistant", "tool"})
ID_ATTEMPTS = 5
_HEX = frozenset("0123456789abcdef")
_CONV_COLUMNS = "id, chat, root_id, title, role, current_message_id, message_count, created_at, updated_at"
_MSG_COLUMNS = "id, role, parent_id, content, created_at, tool_calls, tool_call_id, author, interrupted"
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


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    id: str
    chat: str
    root_id: str
    title: str
    role: str
    current_message_id: str
    message_count: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class OpenedChat:
    settings: dict[str, Any]
    conversation: ConversationInfo
    path: list[Message]  # root-exclusive, up to the cursor


class Store(MemoryStore, Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def create_conversation(self, chat: str, role: str = "default") -> ConversationInfo: ...
    async def open_chat(self, chat: str) -> OpenedChat: ...
    async def get_conversation(self, chat: str, conv_id: str) -> ConversationInfo | None: ...
    async def find_conversations(self, chat: str, id_prefix: str) -> list[ConversationInfo]: ...
    async def list_conversations(self, chat: str, limit: int = 20, offset: int = 0) -> list[ConversationInfo]: ...
    async def count_conversations(self, chat: str) -> int: ...
    async def active_conversation(self, chat: str) -> str | None: ...
    async def set_active_conversation(self, chat: str, conv_id: str) -> None: ...
    async def append_message(self, chat: str, conv_id: str, msg: Message) -> None: ...
    async def append_messages(self, chat: str, conv_id: str, msgs: Sequence[Message]) -> None: ...
    async def set_cursor(self, chat: str, conv_id: str, message_id: str) -> None: ...
    async def get_chain(self, chat: str, conv_id: str, message_id: str) -> list[Message]: ...
    async def load_conversation(self, chat: str, conv_id: str, system_prompt: str) -> Conversation | None: ...
    async def get_message(self, chat: str, conv_id: str, message_id: str) -> Message | None: ...
    async def import_conversation(self, chat: str, conv: Conversation, role: str = "default") -> ConversationInfo: ...
    async def chat_settings(self, chat: str) -> dict[str, Any]: ...
    async def update_chat_settings(self, chat: str, **values: Any) -> None: ...
    async def change_chat_settings(self, chat: str, change: Callable[[dict[str, Any]], T]) -> T: ...
    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool: ...
    async def purge_expired(self) -> int: ...


def _iso(dt: datetime) -> str:
    aware = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def _info(row: Sequence[Any]) -> ConversationInfo:
    conv_id, chat, root_id, title, role, cursor, count, created, updated = row
    return ConversationInfo(
        conv_id, chat, root_id, title, role, cursor, count,
        datetime.fromisoformat(created), datetime.fromisoformat(updated),
    )


def _message(row: Sequence[Any]) -> Message:
    mid, role, parent, content, created, tool_calls, tool_call_id, author, interrupted = row
    calls = json.loads(tool_calls) if tool_calls is not None else None
    return Message(
        mid, role, parent, content, datetime.fromisoformat(created), calls, tool_call_id, author, bool(interrupted)
    )


def title_of(content: str) -> str:
    """One line, at most TITLE_MAX characters: what `/list` shows for a conversation."""
    line = " ".join(content[: TITLE_MAX * 8].split())
    return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"


def _is_conv_id(value: str) -> bool:
    return len(value) == 8 and set(value) <= _HEX


class SqliteStore(MemoryRows):
    """SQLite in WAL mode on its own thread; each public call is one operation (one transaction for writes)."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self._db = Database(str(path))
        self._clock = clock  # wall clock: dedupe expiry must survive restarts

    async def open(self) -> None:
        await self._db.open(_setup)

    async def close(self) -> None:
        await self._db.close()

    async def _read(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.read(op)

    async def _write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.write(op)

    @staticmethod
    def _one(db: sqlite3.Connection, sql: str, params: Sequence[Any] | dict[str, Any]) -> Any:
        return db.execute(sql, params).fetchone()

    @staticmethod
    def _all(db: sqlite3.Connection, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[Any]:
        return db.execute(sql, params).fetchall()

    def _conv(self, db: sqlite3.Connection, chat: str, conv_id: str) -> ConversationInfo | None:
        row = self._one(db, f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND id = ?", (chat, conv_id))
        return _info(row) if row else None

    def _require_conv(self, db: sqlite3.Connection, chat: str, conv_id: str) -> ConversationInfo:
        info = self._conv(db, chat, conv_id)
        if info is None:
            raise KeyError(f"no conversation {conv_id!r} in this chat")
        return info

    def _has_message(self, db: sqlite3.Connection, chat: str, conv_id: str, message_id: str) -> bool:
        sql = "SELECT 1 FROM messages WHERE chat = ? AND conversation_id = ? AND id = ?"
        return self._one(db, sql, (chat, conv_id, message_id)) is not None

    def _free_conv_id(self, db: sqlite3.Connection, chat: str, wanted: str | None = None) -> str:
        conv_id = wanted if wanted and _is_conv_id(wanted) else new_id()
        while self._conv(db, chat, conv_id) is not None:
            conv_id = new_id()
        return conv_id

    @staticmethod
    def _activate(db: sqlite3.Connection, chat: str, conv_id: str) -> None:
        db.execute(
            "INSERT INTO chats (key, active_conversation, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET active_conversation = excluded.active_conversation",
            (chat, conv_id, _iso(utc_now())),
        )

    def _create(self, db: sqlite3.Connection, chat: str, role: str) -> ConversationInfo:
        conv_id, root_id, now = self._free_conv_id(db, chat), new_id(), _iso(utc_now())
        db.execute(
            f"INSERT INTO conversations ({_CONV_COLUMNS}) VALUES (?, ?, ?, '', ?, ?, 0, ?, ?)",
            (conv_id, chat, root_id, role, root_id, now, now),
        )
        self._activate(db, chat, conv_id)
        return self._require_conv(db, chat, conv_id)

    async def create_conversation(self, chat: str, role: str = "default") -> ConversationInfo:
        return await self._write(lambda db: self._create(db, chat, role))

    async def open_chat(self, chat: str) -> OpenedChat:
        """Everything a session needs on first use, in one operation: its settings, its active conversation
        (the chat's first one is created here) and the path to that conversation's cursor."""

        def op(db: sqlite3.Connection) -> OpenedChat:
            row = self._one(db, "SELECT settings, active_conversation FROM chats WHERE key = ?", (chat,))
            settings = dict(json.loads(row[0])) if row else {}
            info = self._conv(db, chat, row[1]) if row and row[1] else None
            if info is None:
                info = self._create(db, chat, "default")
            path: list[Message] = []
            if info.current_message_id != info.root_id:
                params = {"mid": info.current_message_id, "chat": chat, "conv": info.id}
                path = [_message(r) for r in self._all(db, _CHAIN_SQL, params)]
            return OpenedChat(settings, info, path)

        return await self._write(op)

    async def get_conversation(self, chat: str, conv_id: str) -> ConversationInfo | None:
        return await self._read(lambda db: self._conv(db, chat, conv_id))

    async def find_conversations(self, chat: str, id_prefix: str) -> list[ConversationInfo]:
        """Conversations whose id starts with a hex prefix (at most 10): `/switch a1b2` needs one."""
        prefix = id_prefix.strip().lower()
        if not 1 <= len(prefix) <= 8 or not set(prefix) <= _HEX:
            return []
        sql = f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND id >= ? AND id < ? ORDER BY id LIMIT 10"
        rows = await self._read(lambda db: self._all(db, sql, (chat, prefix, prefix + "g")))
        return [_info(r) for r in rows]

    async def list_conversations(self, chat: str, limit: int = 20, offset: int = 0) -> list[ConversationInfo]:
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? "
               "ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?")
        rows = await self._read(lambda db: self._all(db, sql, (chat, max(limit, 0), max(offset, 0))))
        return [_info(r) for r in rows]

    async def count_conversations(self, chat: str) -> int:
        row = await self._read(lambda db: self._one(db, "SELECT COUNT(*) FROM conversations WHERE chat = ?", (chat,)))
        return int(row[0])

    async def active_conversation(self, chat: str) -> str | None:
        row = await self._read(lambda db: self._one(db, "SELECT active_conversation FROM chats WHERE key = ?", (chat,)))
        return row[0] if row else None

    async def set_active_conversation(self, chat: str, conv_id: str) -> None:
        def op(db: sqlite3.Connection) -> None:
            self._require_conv(db, chat, conv_id)
            self._activate(db, chat, conv_id)

        await self._write(op)

    async def append_message(self, chat: str, conv_id: str, msg: Message) -> None:
        await self.append_messages(chat, conv_id, [msg])

    async def append_messages(self, chat: str, conv_id: str, msgs: Sequence[Message]) -> None:
        """Insert, move the cursor to the last one, bump count/updated_at/title: one transaction.

        A message whose parent_id is None goes under the cursor, as in `Conversation.add_message`.
        """
        if not msgs:
            return

        def op(db: sqlite3.Connection) -> None:
            self._insert(db, self._require_conv(db, chat, conv_id), msgs, msgs[-1].id)

        await self._write(op)

    def _insert(self, db: sqlite3.Connection, info: ConversationInfo, msgs: Sequence[Message], cursor: str) -> None:
        known, parent_default, title = {info.root_id}, info.current_message_id, ""
        for msg in msgs:
            parent = msg.parent_id or parent_default
            if msg.role not in STORED_ROLES:
                raise ValueError(f"message {msg.id!r}: role {msg.role!r} is not stored")
            if parent not in known and not self._has_message(db, info.chat, info.id, parent):
                raise KeyError(f"message {msg.id!r}: unknown parent {parent!r}")
            calls = json.dumps(msg.tool_calls, ensure_ascii=False) if msg.tool_calls is not None else None
            for attempt in range(ID_ATTEMPTS):
                try:
                    db.execute(
                        "INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, tool_calls, "
                        "tool_call_id, author, interrupted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (msg.id, info.id, info.chat, parent, msg.role, msg.content, calls, msg.tool_call_id,
                         msg.author, int(msg.interrupted), _iso(msg.created_at)),
                    )
                    break
                except sqlite3.IntegrityError:
                    # Ids are 8 hex (seed 000), so a long conversation can draw one twice; a lone new
                    # message has no children yet and simply takes another id.
                    if len(msgs) > 1 or attempt == ID_ATTEMPTS - 1:
                        raise ValueError(f"duplicate message id {msg.id!r}") from None
                    msg.id = cursor = new_id()
            known.add(msg.id)
            parent_default = msg.id
            if not title and msg.role == "user":
                title = title_of(msg.content)
        db.execute(
            "UPDATE conversations SET current_message_id = ?, message_count = message_count + ?, "
            "updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE chat = ? AND id = ?",
            (cursor, len(msgs), _iso(utc_now()), title, info.chat, info.id),
        )

    async def import_conversation(self, chat: str, conv: Conversation, role: str = "default") -> ConversationInfo:
        """Store a whole tree (e.g. from JSONL) keeping message ids; a taken or odd conv id is replaced.

        The imported conversation does not become the chat's active one.
        """

        def op(db: sqlite3.Connection) -> ConversationInfo:
            conv_id, now = self._free_conv_id(db, chat, conv.id), _iso(utc_now())
            db.execute(
                f"INSERT INTO conversations ({_CONV_COLUMNS}) VALUES (?, ?, ?, '', ?, ?, 0, ?, ?)",
                (conv_id, chat, conv.root_id, role, conv.root_id, now, now),
            )
            info = self._require_conv(db, chat, conv_id)
            stored = [m for m in conv.messages.values() if m.id != conv.root_id]
            if stored:
                self._insert(db, info, stored, conv.current_message_id)
            return self._require_conv(db, chat, conv_id)

        return await self._write(op)

    async def set_cursor(self, chat: str, conv_id: str, message_id: str) -> None:
        def op(db: sqlite3.Connection) -> None:
            info = self._require_conv(db, chat, conv_id)
            if message_id != info.root_id and not self._has_message(db, chat, conv_id, message_id):
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            db.execute(
                "UPDATE conversations SET current_message_id = ? WHERE chat = ? AND id = ?",
                (message_id, chat, conv_id),
            )

        await self._write(op)

    async def get_chain(self, chat: str, conv_id: str, message_id: str) -> list[Message]:
        """Root-exclusive path to a message; a recursive CTE over the id index, so cost ∝ depth."""

        def op(db: sqlite3.Connection) -> list[Message]:
            info = self._require_conv(db, chat, conv_id)
            if message_id == info.root_id:
                return []
            rows = self._all(db, _CHAIN_SQL, {"mid": message_id, "chat": chat, "conv": conv_id})
            if not rows:
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            return [_message(r) for r in rows]

        return await self._read(op)

    async def load_conversation(self, chat: str, conv_id: str, system_prompt: str) -> Conversation | None:
        """The whole tree of one conversation (for /tree, /goto), with today's system prompt as root."""
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = ? AND conversation_id = ? ORDER BY seq"

        def op(db: sqlite3.Connection) -> Conversation | None:
            info = self._conv(db, chat, conv_id)
            if info is None:
                return None
            rows = self._all(db, sql, (chat, conv_id))
            return Conversation.from_messages(
                info.id, info.root_id, system_prompt, (_message(r) for r in rows), info.current_message_id
            )

        return await self._read(op)

    async def get_message(self, chat: str, conv_id: str, message_id: str) -> Message | None:
        sql = f"SELECT {_MSG_COLUMNS} FROM messages WHERE chat = ? AND conversation_id = ? AND id = ?"
        row = await self._read(lambda db: self._one(db, sql, (chat, conv_id, message_id)))
        return _message(row) if row else None

    async def chat_settings(self, chat: str) -> dict[str, Any]:
        row = await self._read(lambda db: self._one(db, "SELECT settings FROM chats WHERE key = ?", (chat,)))
        return dict(json.loads(row[0])) if row else {}

    async def update_chat_settings(self, chat: str, **values: Any) -> None:
        """Merge values into the chat's settings; a value of None removes that setting."""
        await self.change_chat_settings(chat, lambda settings: settings.update(values))

    async def change_chat_settings(self, chat: str, change: Callable[[dict[str, Any]], T]) -> T:
        """Read, change and write a chat's settings in one transaction, so concurrent changes never lose
        one another. `change` edits the dict in place (None removes a key) and runs on the database thread."""

        def op(db: sqlite3.Connection) -> T:
            row = self._one(db, "SELECT settings FROM chats WHERE key = ?", (chat,))
            settings = json.loads(row[0]) if row else {}
            result = change(settings)
            settings = {k: v for k, v in settings.items() if v is not None}
            db.execute(
                "INSERT INTO chats (key, settings, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET settings = excluded.settings",
                (chat, json.dumps(settings, ensure_ascii=False), _iso(utc_now())),
            )
            return result

        return await self._write(op)

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        """Record key; True if it was already recorded and has not expired (one atomic upsert)."""
        now = self._clock()
        sql = ("INSERT INTO seen_events (key, expires_at) VALUES (?, ?) ON CONFLICT (key) "
               "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= ?")
        return await self._write(lambda db: db.execute(sql, (key, now + ttl, now)).rowcount == 0)

    async def purge_expired(self) -> int:
        sql = "DELETE FROM seen_events WHERE expires_at <= ?"
        return await self._write(lambda db: db.execute(sql, (self._clock(),)).rowcount)


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a commit survives SIGKILL
    db.execute("PRAGMA busy_timeout = 5000")
    migrate(db)
