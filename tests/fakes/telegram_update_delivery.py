"""How the fake Bot API hands updates to the bot: created in the feed (telegram_updates.py), then taken by
getUpdates long polling or POSTed to the webhook set with setWebhook. Mixed into FakeTelegram."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import aiohttp

from tests.fakes.telegram_rules import ApiError, check_secret
from tests.fakes.telegram_updates import UpdateFeed


class UpdateDelivery:
    updates: UpdateFeed
    webhook: dict[str, Any] | None
    webhook_statuses: list[int]
    _client: aiohttp.ClientSession | None
    _last_push: dict[Any, asyncio.Task[None]]  # chat id → its latest webhook POST
    _spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]

    def inject_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Telegram creates an update; one of a type the bot did not allow ends in `updates.dropped`."""
        created = self.updates.create(update)
        if created is None:
            return self.updates.dropped[-1]
        if self.webhook is not None:
            self._push(created)
        else:
            self.updates.queue(created)
        return created

    def redeliver(self, update: dict[str, Any]) -> dict[str, Any]:
        """Telegram sends the same event again (e.g. after a crash) under a new update_id."""
        return self.inject_update({k: v for k, v in update.items() if k != "update_id"})

    def _push(self, update: dict[str, Any]) -> None:
        """POST to the webhook; a chat's next update waits until its previous one was answered, so a chat's
        updates arrive in order however many connections are open."""
        message = update.get("message") or (update.get("callback_query") or {}).get("message") or {}
        chat = (message.get("chat") or {}).get("id")
        self._last_push[chat] = self._spawn(self._post_webhook(update, self._last_push.get(chat)))

    async def _post_webhook(self, update: dict[str, Any], after: asyncio.Task[None] | None = None) -> None:
        if after is not None:
            await asyncio.gather(after, return_exceptions=True)
        assert self.webhook is not None and self._client is not None
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.webhook.get("secret_token", "")}
        async with self._client.post(self.webhook["url"], json=update, headers=headers) as response:
            self.webhook_statuses.append(response.status)

    async def _m_getUpdates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; "
                                "use deleteWebhook to delete the webhook first")
        self.updates.allow(p.get("allowed_updates"))
        return await self.updates.poll(int(p.get("offset") or 0), int(p.get("limit") or 100),
                                       float(p.get("timeout") or 0))

    async def _m_setWebhook(self, p: dict[str, Any]) -> bool:
        self.webhook = {"url": p["url"], "secret_token": check_secret(p.get("secret_token", ""))}
        self.updates.allow(p.get("allowed_updates"))
        for update in self.updates.take_all():
            self._push(update)
        return True

    async def _m_deleteWebhook(self, p: dict[str, Any]) -> bool:
        self.webhook = None
        if p.get("drop_pending_updates"):
            self.updates.drop_pending()
        return True
