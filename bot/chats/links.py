"""Linked chats: a person's DMs on two platforms (or with two bot accounts) sharing one history.

`/handoff link` in one DM gives a code; `/resume CODE` in another DM links it: from then on every message of the
second chat (the alias) is answered in the first chat's session (its home): the same conversations, cursor,
memory and files, one lane and one owner replica for both, while each reply still goes where its message came
from. `/unlink` gives the alias its own history back (kept as it was). Links are few (one per person who asked),
so all of them are held in memory, read at start, and re-read on every replica when one changes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.adapter import Relay
from bot.chats.sessions import SessionKey
from bot.messages import ChatRef, IncomingMessage, Overheard
from bot.store.handoffs import HandoffStore

log = logging.getLogger("bothub.links")
TOPIC = "chat-links"  # the relay topic a replica announces a changed link on


class ChatLinks:
    def __init__(self, store: HandoffStore, relay: Relay | None) -> None:
        self._store = store
        self._relay = relay
        self._homes: dict[str, str] = {}  # alias storage key → home storage key
        self._stop_listening: Callable[[], None] = lambda: None
        self._reloads: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        if self._relay is not None:  # before the first read: a change made meanwhile is re-read after it
            self._stop_listening = self._relay.listen(TOPIC, lambda _event: self._reload_soon())
        await self._reload()

    def stop(self) -> None:
        self._stop_listening()

    def key_of(self, msg: IncomingMessage | Overheard) -> SessionKey:
        """The session a message is answered in: its chat's own, or the home its chat is linked to."""
        return self.resolved(SessionKey.of(msg))

    def key_at(self, chat: ChatRef) -> SessionKey:
        return self.resolved(SessionKey.at(chat))

    async def link(self, alias: SessionKey, home: str) -> None:
        await self._store.link(alias.storage_key, self._homes.get(home, home), time.time())
        await self._changed()

    async def unlink(self, alias: SessionKey) -> str | None:
        home = await self._store.unlink(alias.storage_key)
        await self._changed()
        return home

    def resolved(self, key: SessionKey) -> SessionKey:
        """The key itself, or the home it is linked to."""
        home = self._homes.get(key.storage_key)
        return key if home is None else SessionKey.parse(home)

    async def _changed(self) -> None:
        await self._reload()
        if self._relay is not None:
            await self._relay.publish(TOPIC, {})

    async def _reload(self) -> None:
        self._homes = await self._store.links()

    def _reload_soon(self) -> None:
        async def reload() -> None:
            try:
                await self._reload()
            except Exception:
                log.exception("could not re-read the chat links")

        task = asyncio.create_task(reload())
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)
