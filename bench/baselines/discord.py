"""The Discord yardstick: a discord.py Client answering DMs and @mentions (see bench/baselines/__init__.py).

discord.py waits out rate limits by itself. Configured like bothub by DISCORD_BOT_TOKEN, DISCORD_API_BASE,
DISCORD_GATEWAY_URL, OPENAI_BASE_URL, OPENAI_API_KEY and BOTHUB_MODEL; `--stream` edits.
"""

from __future__ import annotations

import os

import discord
import yarl

from bench.baselines.model import Model, streaming


def main() -> None:
    env, stream = dict(os.environ), streaming()
    discord.http.Route.BASE = env["DISCORD_API_BASE"].rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(env["DISCORD_GATEWAY_URL"])
    intents = discord.Intents.default()
    intents.message_content = True
    client = discord.Client(intents=intents)
    model = Model(env)

    @client.event
    async def on_message(message: discord.Message) -> None:
        me = client.user
        if me is None or message.author.bot or (message.guild is not None and me not in message.mentions):
            return
        text = message.content.replace(f"<@{me.id}>", "").strip()

        async def edit(sent: discord.Message, reply: str) -> object:
            return await sent.edit(content=reply)

        await model.answer(text, message.channel.send, edit, stream)

    client.run(env["DISCORD_BOT_TOKEN"], log_handler=None)


if __name__ == "__main__":
    main()
