"""Long polling that confirms only what is stored: a batch from getUpdates is taken into the hub (its durable
inbox) before the next getUpdates' offset confirms it to Telegram. A poller killed mid-batch leaves the rest
unconfirmed; Telegram hands it to the next poller (another replica), and the inbox's dedupe key (the update's
message) drops what had been stored already, so nothing is lost and nothing is answered twice.

PTB's own Updater confirms a batch on its next request while the updates still wait in its queue, so a kill
in between lost them; this loop replaces it. A chat's updates are taken in order, different chats at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from telegram import Bot, Update
from telegram.error import InvalidToken, TelegramError

log = logging.getLogger("bothub.telegram")

RETRY_AFTER = (1.0, 2.0, 5.0, 10.0)  # seconds between failed getUpdates, growing
Take = Callable[[Update], Awaitable[None]]


class Poller:
    def __init__(self, bot: Bot, take: Take, timeout: int, allowed_updates: list[str]) -> None:
        self._bot = bot
        self._take = take
        self._timeout = timeout
        self._allowed = allowed_updates
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Polling, and the loop has not died (a revoked token ends it)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._poll(), name="telegram-poller")

    async def stop(self) -> None:
        """Stop at once: a batch cut short stays unconfirmed, so the next poller gets it again."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _poll(self) -> None:
        offset: int | None = None  # None: from the oldest update Telegram still holds unconfirmed
        failures = 0
        while True:
            try:
                updates = await self._bot.get_updates(offset=offset, timeout=self._timeout,
                                                      allowed_updates=self._allowed)
            except InvalidToken:
                log.error("telegram polling: the token was rejected; polling stopped")
                raise
            except TelegramError as e:
                log.warning("telegram polling: %s", e.message)
                await asyncio.sleep(RETRY_AFTER[min(failures, len(RETRY_AFTER) - 1)])
                failures += 1
                continue
            failures = 0
            await self._store(updates)
            if updates:
                offset = updates[-1].update_id + 1  # the next request confirms them: they are in the inbox

    async def _store(self, updates: Sequence[Update]) -> None:
        chats: dict[int | None, list[Update]] = {}
        for update in updates:
            chat = update.effective_chat
            chats.setdefault(chat.id if chat is not None else None, []).append(update)

        async def in_order(batch: list[Update]) -> None:
            for update in batch:
                await self._take(update)

        await asyncio.gather(*(in_order(batch) for batch in chats.values()))
