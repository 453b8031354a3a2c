"""One fake Bot API server for several bots, as Telegram's own is: each token reaches its own bot (a FakeTelegram
with its chats, updates, flood limits and command menu, strict as ever), an unknown token gets 401 as from
Telegram. The same chat id in two bots is one group both bots are in, each seeing its own messages."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.serve import serve_local
from tests.fakes.telegram_api import BOT_USER, FakeTelegram


class TelegramCloud:
    def __init__(self) -> None:
        self.bots: dict[str, FakeTelegram] = {}
        self.port = 0
        self.unknown_tokens: list[str] = []  # requests with a token no bot has (a credential check that failed)
        self._runner: web.AppRunner | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_bot(self, token: str, username: str, bot_id: int) -> FakeTelegram:
        """A bot that exists at Telegram (its token works from now on); call it on the running loop."""
        user: dict[str, Any] = {**BOT_USER, "id": bot_id, "username": username, "first_name": username}
        bot = FakeTelegram(token, user)
        bot.port = self.port
        bot._client = aiohttp.ClientSession()  # its webhook POSTs
        self.bots[token] = bot
        return bot

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        self._runner, self.port = await serve_local(app, handler_cancellation=True)

    async def stop(self) -> None:
        for bot in self.bots.values():
            await bot.stop()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        bot = self.bots.get(request.match_info["token"])
        if bot is None:
            self.unknown_tokens.append(request.match_info["method"])
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        return await bot._handle(request)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        bot = self.bots.get(request.match_info["token"])
        return web.Response(status=401) if bot is None else await bot.serve_file(request)
