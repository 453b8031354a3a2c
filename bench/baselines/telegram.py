"""The Telegram yardstick: PTB with concurrent updates, no history, no storage (see bench/baselines/__init__.py).

A 429 is slept off and the call tried again, as PTB's own examples do. Configured like bothub by
TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE, OPENAI_BASE_URL, OPENAI_API_KEY and BOTHUB_MODEL; `--stream` edits.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import Message, Update
from telegram.error import RetryAfter
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters

from bench.baselines.model import Model, streaming

T = TypeVar("T")


async def _patiently(call: Callable[[], Awaitable[T]]) -> T:
    for _ in range(10):
        try:
            return await call()
        except RetryAfter as e:
            wait = e.retry_after
            await asyncio.sleep(wait if isinstance(wait, int | float) else wait.total_seconds())
    return await call()


def build(env: dict[str, str], stream: bool) -> Application:
    root = env["TELEGRAM_API_BASE"].rstrip("/")
    app = (ApplicationBuilder().token(env["TELEGRAM_BOT_TOKEN"]).base_url(f"{root}/bot")
           .concurrent_updates(True).build())
    model = Model(env)

    async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or not message.text:
            return
        text = message.text.replace(f"@{context.bot.username}", "").strip()

        async def send(reply: str) -> Message:
            return await _patiently(lambda: message.reply_text(reply, do_quote=False))

        async def edit(sent: Message, reply: str) -> object:
            return await _patiently(lambda: sent.edit_text(reply))

        await model.answer(text, send, edit, stream)

    mentioned = filters.ChatType.PRIVATE | filters.Entity("mention")
    app.add_handler(MessageHandler(filters.TEXT & mentioned, answer))
    return app


def main() -> None:
    build(dict(os.environ), streaming()).run_polling(allowed_updates=["message"], timeout=10)


if __name__ == "__main__":
    main()
