"""Long polling that confirms only what is stored: an update is confirmed to Telegram (by a later getUpdates'
offset) only once it and every update before it are taken into the hub (its durable inbox). A poller killed
mid-batch leaves the rest unconfirmed; Telegram hands it to the next poller (another replica), and the inbox's
dedupe key (the update's message) drops what had been stored already: nothing lost, nothing answered twice.

PTB's own Updater confirms a batch on its next request while the updates still wait in its queue, so a kill
in between lost them; this loop replaces it. A chat's updates are taken in order, different chats at once (a
slow one holds back the confirmation, not the other chats).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from telegram import Bot, Update
from telegram.error import Conflict, InvalidToken, TelegramError

log = logging.getLogger("bothub.telegram")

RETRY_AFTER = (1.0, 2.0, 5.0, 10.0)  # seconds between failed getUpdates, growing
STOP_GRACE = 5.0  # seconds updates being taken may still take when polling stops
RECHECK = 0.2  # seconds to wait for a slow update before asking again, when nothing new came
Take = Callable[[Update], Awaitable[None]]


class Poller:
    def __init__(self, bot: Bot, take: Take, timeout: int, allowed_updates: list[str]) -> None:
        self._bot = bot
        self._take = take
        self._timeout = timeout
        self._allowed = allowed_updates
        self._task: asyncio.Task[None] | None = None
        self._taking: dict[int, asyncio.Task[bool]] = {}  # update id → its taking, until it is confirmed
        self._last: dict[int | None, asyncio.Task[bool]] = {}  # chat → the taking of its latest update
        self._next = 0  # the id after the highest update seen
        self._failed: set[int] = set()  # updates whose taking failed: never confirmed, taken again when they return

    @property
    def running(self) -> bool:
        """Polling, and the loop has not died (a revoked token ends it)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        if not self.running:
            await self._unhook()
            self._task = asyncio.create_task(self._poll(), name="telegram-poller")

    async def stop(self) -> None:
        """Stop polling; what is being taken gets a moment to finish, then what was taken is confirmed (the rest
        stays unconfirmed, so the next poller gets it again)."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        taking = list(self._taking.values())
        if taking:
            await asyncio.wait(taking, timeout=STOP_GRACE)
        for left in taking:
            left.cancel()
        await asyncio.gather(*taking, return_exceptions=True)
        offset = self._confirmed()
        self._taking.clear()
        self._last.clear()
        self._failed.clear()
        if offset is not None:
            with contextlib.suppress(TelegramError):  # e.g. 409 once another replica polls
                await self._bot.get_updates(offset=offset, timeout=0, limit=1, allowed_updates=self._allowed)

    async def _unhook(self) -> None:
        """Telegram refuses getUpdates while a webhook is set (409 Conflict)."""
        try:
            await self._bot.delete_webhook()
        except TelegramError as e:
            log.warning("telegram polling: deleting the webhook failed: %s", e.message)

    async def _poll(self) -> None:
        failures = 0
        while True:
            try:
                updates = await self._bot.get_updates(offset=self._confirmed(), timeout=self._timeout,
                                                      allowed_updates=self._allowed)
            except InvalidToken:
                log.error("telegram polling: the token was rejected; polling stopped")
                raise
            except TelegramError as e:
                log.warning("telegram polling: %s", e.message)
                if isinstance(e, Conflict):
                    await self._unhook()  # a webhook set meanwhile (or another poller: then this does nothing)
                await asyncio.sleep(RETRY_AFTER[min(failures, len(RETRY_AFTER) - 1)])
                failures += 1
                continue
            failures = 0
            if self._failed & {u.update_id for u in updates}:  # the store failed a moment ago: give it one
                await asyncio.sleep(RETRY_AFTER[0])
            fresh = [u for u in updates if u.update_id >= self._next or u.update_id in self._failed]
            self._failed.difference_update(u.update_id for u in fresh)
            for update in fresh:
                self._taking[update.update_id] = self._spawn(update)
            self._next = max([self._next, *(u.update_id + 1 for u in fresh)])
            if not fresh and self._taking:  # only updates still being taken came back: give them a moment
                await asyncio.wait(self._taking.values(), timeout=RECHECK, return_when=asyncio.FIRST_COMPLETED)

    def _confirmed(self) -> int | None:
        """The offset that confirms every update taken so far, up to the first still being taken; None before
        the first update (from the oldest Telegram still holds unconfirmed)."""
        for update_id in sorted(self._taking):
            if not self._taking[update_id].done() or update_id in self._failed:
                return update_id
            del self._taking[update_id]
        return self._next or None

    def _spawn(self, update: Update) -> asyncio.Task[bool]:
        chat = update.effective_chat
        key = chat.id if chat is not None else None
        before = self._last.get(key)

        async def take() -> bool:
            if before is not None:
                await asyncio.wait([before])  # the chat's previous update first
                if before.cancelled() or not before.result():  # it comes again: this one follows it then
                    self._failed.add(update.update_id)
                    return False
            try:
                await self._take(update)
            except Exception:  # not kept (NotKept, or worse): unconfirmed, and taken again when it comes back
                log.warning("telegram update %s not taken; asked for again", update.update_id, exc_info=True)
                self._failed.add(update.update_id)
                return False
            return True

        task = self._last[key] = asyncio.create_task(take())
        task.add_done_callback(lambda done: self._last.pop(key) if self._last.get(key) is done else None)
        return task
