"""The Slack yardstick: slack_sdk's Socket Mode client answering DMs and app mentions (see
bench/baselines/__init__.py): each envelope acked at once, the answer posted with chat.postMessage.

Configured like bothub by SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_BASE, OPENAI_BASE_URL, OPENAI_API_KEY and
BOTHUB_MODEL; `--stream` edits one message with chat.update.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from bench.baselines.model import Model, streaming

MENTION = re.compile(r"<@[A-Z0-9]+>")


async def main() -> None:
    env, stream = dict(os.environ), streaming()
    web = AsyncWebClient(token=env["SLACK_BOT_TOKEN"], base_url=env["SLACK_API_BASE"])
    model = Model(env)
    socket = SocketModeClient(env["SLACK_APP_TOKEN"], web_client=AsyncWebClient(base_url=env["SLACK_API_BASE"]))

    async def on_request(client: Any, request: SocketModeRequest) -> None:
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        event = request.payload.get("event") or {}
        direct = event.get("type") == "message" and event.get("channel_type") == "im"
        if request.type != "events_api" or event.get("bot_id") or not (direct or event.get("type") == "app_mention"):
            return
        channel, thread = event["channel"], event.get("thread_ts")

        async def send(text: str) -> str:
            return str((await web.chat_postMessage(channel=channel, text=text, thread_ts=thread))["ts"])

        async def edit(ts: str, text: str) -> object:
            return await web.chat_update(channel=channel, ts=ts, text=text)

        await model.answer(MENTION.sub("", event.get("text", "")).strip(), send, edit, stream)

    socket.socket_mode_request_listeners.append(on_request)
    await socket.connect()
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
