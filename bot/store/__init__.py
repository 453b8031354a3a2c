"""Persistence behind small Protocols; the SQLite backend lives in `bot.store.sqlite`."""

from bot.store.sqlite.memories import MemoryEntry, MemoryStore
from bot.store.sqlite.store import ConversationInfo, OpenedChat, SqliteStore, Store, title_of

__all__ = ["ConversationInfo", "MemoryEntry", "MemoryStore", "OpenedChat", "SqliteStore", "Store", "title_of"]
