"""Hand-off codes on SQLite: spending one is a single DELETE … RETURNING."""

from __future__ import annotations

import sqlite3

from bot.store.handoffs import Handoff
from bot.store.sqlite.database import Database

_COLUMNS = "code, chat, conversation_id, platform, user_id, move, expires_at, link"


def _handoff(row: tuple[object, ...] | None) -> Handoff | None:
    if row is None:
        return None
    code, chat, conv, platform, user, move, expires, link = row
    return Handoff(str(code), str(chat), str(conv), str(platform), str(user), bool(move), float(str(expires)),
                   bool(link))


class SqliteHandoffs:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def offer(self, handoff: Handoff, now: float) -> None:
        h = handoff
        values = (h.code, h.chat, h.conversation_id, h.platform, h.user_id, int(h.move), h.expires_at, int(h.link))

        def write(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM handoffs WHERE expires_at <= ?", (now,))
            db.execute(f"INSERT INTO handoffs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)

        await self._db.write(write)

    async def peek(self, code: str, now: float) -> Handoff | None:
        sql = f"SELECT {_COLUMNS} FROM handoffs WHERE code = ? AND expires_at > ?"
        return _handoff(await self._db.read(lambda db: db.execute(sql, (code, now)).fetchone()))

    async def take(self, code: str, now: float) -> Handoff | None:
        sql = f"DELETE FROM handoffs WHERE code = ? AND expires_at > ? RETURNING {_COLUMNS}"
        return _handoff(await self._db.write(lambda db: db.execute(sql, (code, now)).fetchone()))

    async def link(self, alias: str, home: str, now: float) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE chat_links SET home = ? WHERE home = ?", (home, alias))
            db.execute("INSERT INTO chat_links (alias, home, linked_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (alias) DO UPDATE SET home = excluded.home, linked_at = excluded.linked_at",
                       (alias, home, now))

        await self._db.write(write)

    async def unlink(self, alias: str) -> str | None:
        row = await self._db.write(
            lambda db: db.execute("DELETE FROM chat_links WHERE alias = ? RETURNING home", (alias,)).fetchone())
        return None if row is None else str(row[0])

    async def links(self) -> dict[str, str]:
        rows = await self._db.read(lambda db: db.execute("SELECT alias, home FROM chat_links").fetchall())
        return {str(alias): str(home) for alias, home in rows}
