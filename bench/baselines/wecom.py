"""The WeCom yardstick: the thinnest AI bot on the long connection (see bench/baselines/__init__.py). WeCom has
no official Python SDK for it, so this is what a thin bot writes: aiohttp's WebSocket, subscribe, a ping every
30 s, and for each message one stream reply with the whole answer and `finish`; with `--stream`, the stream's
content refreshed at most once a second, then finished. No acks awaited, no retries, no reconnect: a refusal
loses the answer. Configured like bothub by WECOM_BOT_ID, WECOM_BOT_SECRET, WECOM_WS_URL, OPENAI_BASE_URL,
OPENAI_API_KEY and BOTHUB_MODEL.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from typing import Any

import aiohttp

from bench.baselines.model import Model, streaming


async def bot() -> None:
    env, stream = dict(os.environ), streaming()
    model = Model(env)
    tasks: set[asyncio.Task[None]] = set()
    async with aiohttp.ClientSession() as http, http.ws_connect(env["WECOM_WS_URL"]) as ws:

        async def frame(cmd: str, req_id: str, body: dict[str, Any] | None = None) -> None:
            await ws.send_str(json.dumps({"cmd": cmd, "headers": {"req_id": req_id}, "body": body or {}}))

        async def ping() -> None:
            while True:
                await asyncio.sleep(30)
                await frame("ping", uuid.uuid4().hex)

        async def answer(req_id: str, text: str) -> None:
            stream_id, last = uuid.uuid4().hex, [""]

            async def send(reply: str, finish: bool = not stream) -> str:
                last[0] = reply
                await frame("aibot_respond_msg", req_id, {"msgtype": "stream", "stream": {
                    "id": stream_id, "finish": finish, "content": reply}})
                return stream_id

            async def edit(_id: str, reply: str) -> None:
                await send(reply, finish=False)

            await model.answer(text, send, edit, stream)
            if stream:
                await send(last[0], finish=True)

        credentials = {"bot_id": env["WECOM_BOT_ID"], "secret": env["WECOM_BOT_SECRET"]}
        await frame("aibot_subscribe", uuid.uuid4().hex, credentials)
        pinger = asyncio.create_task(ping())
        async for msg in ws:
            data = json.loads(msg.data)
            if data.get("cmd") != "aibot_msg_callback":
                continue
            body = data["body"]
            content = body.get("text", {}).get("content", "")
            if body.get("chattype") == "group" and content.startswith("@"):
                content = content.split(" ", 1)[-1]
            task = asyncio.create_task(answer(data["headers"]["req_id"], content))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        pinger.cancel()


if __name__ == "__main__":
    asyncio.run(bot())
