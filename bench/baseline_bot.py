"""The yardstick for bench/telegram_e2e.py: the smallest reasonable PTB + openai echo bot.

Concurrent updates, no history, no storage, no streamed delivery: it reads the whole model answer
and sends it as one message (sleeping on a 429 and trying again). Configured like bothub by
TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE, OPENAI_BASE_URL, OPENAI_API_KEY and BOTHUB_MODEL.
"""

from __future__ import annotations

import asyncio
import os

import openai
from telegram import Update
from telegram.error import RetryAfter
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters


def build(env: dict[str, str]) -> Application:
    root = env["TELEGRAM_API_BASE"].rstrip("/")
    app = (ApplicationBuilder().token(env["TELEGRAM_BOT_TOKEN"]).base_url(f"{root}/bot")
           .concurrent_updates(True).build())
    llm = openai.AsyncOpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env.get("OPENAI_API_KEY") or "none")
    model = env.get("BOTHUB_MODEL", "fake-model")

    async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or not message.text:
            return
        text = message.text.replace(f"@{context.bot.username}", "").strip()
        stream = await llm.chat.completions.create(
            model=model, messages=[{"role": "user", "content": text}], stream=True)
        parts = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
        for _ in range(5):
            try:
                await context.bot.send_message(message.chat_id, "".join(parts) or "…")
                return
            except RetryAfter as e:
                await asyncio.sleep(e.retry_after if isinstance(e.retry_after, int | float)
                                    else e.retry_after.total_seconds())

    mentioned = filters.ChatType.PRIVATE | filters.Entity("mention")
    app.add_handler(MessageHandler(filters.TEXT & mentioned, answer))
    return app


def main() -> None:
    build(dict(os.environ)).run_polling(allowed_updates=["message"], timeout=10)


if __name__ == "__main__":
    main()
