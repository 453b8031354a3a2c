"""The Feishu yardstick: lark-oapi's long-connection client and its async REST calls (see
bench/baselines/__init__.py).

`ws.Client.start()` runs lark-oapi's own event loop in the main thread and calls the handler synchronously on
it, so the handler only schedules the answer as a task on that loop. REST calls are the SDK's synchronous ones
in a worker thread: its `a*` methods build a new httpx client per call (a TLS context each), which made this
bot spend 48 ms of CPU per answer. Every answer is a text reply to the user's message (in its topic when it
came from one); a 429 is slept off and the call tried again. Configured like
bothub by FEISHU_APP_ID, FEISHU_APP_SECRET, FEISHU_DOMAIN, OPENAI_BASE_URL, OPENAI_API_KEY and BOTHUB_MODEL;
`--stream` edits.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import lark_oapi as lark
from lark_oapi.api.im.v1 import (
    P2ImMessageReceiveV1,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
    UpdateMessageRequest,
    UpdateMessageRequestBody,
)

from bench.baselines.model import Model, streaming

RATE_LIMITED = 99991400


async def _patiently(call: Any, request: Any) -> Any:
    for _ in range(10):
        response = await asyncio.to_thread(call, request)
        if response.code != RATE_LIMITED:
            return response
        await asyncio.sleep(1.0)
    return response


def main() -> None:
    env, stream = dict(os.environ), streaming()
    app_id, secret, domain = env["FEISHU_APP_ID"], env["FEISHU_APP_SECRET"], env["FEISHU_DOMAIN"]
    client = lark.Client.builder().app_id(app_id).app_secret(secret).domain(domain).log_level(
        lark.LogLevel.WARNING).build()
    model = Model(env)
    tasks: set[asyncio.Task[None]] = set()

    async def answer(message_id: str, text: str, in_thread: bool) -> None:
        async def send(reply: str) -> str:
            body = ReplyMessageRequestBody.builder().msg_type("text").content(json.dumps({"text": reply})) \
                .reply_in_thread(in_thread).build()
            sent = await _patiently(client.im.v1.message.reply,
                                    ReplyMessageRequest.builder().message_id(message_id).request_body(body).build())
            return str(sent.data.message_id) if sent.success() else ""

        async def edit(sent_id: str, reply: str) -> object:
            body = UpdateMessageRequestBody.builder().msg_type("text").content(json.dumps({"text": reply})).build()
            return await _patiently(client.im.v1.message.update,
                                    UpdateMessageRequest.builder().message_id(sent_id).request_body(body).build())

        await model.answer(text, send, edit, stream)

    def on_message(event: P2ImMessageReceiveV1) -> None:
        message = event.event.message if event.event else None
        if message is None or message.message_type != "text":
            return
        if message.chat_type != "p2p" and not message.mentions:
            return
        text = json.loads(message.content or "{}").get("text", "")
        for mention in message.mentions or ():
            text = text.replace(mention.key or "", "")
        task = asyncio.get_running_loop().create_task(
            answer(str(message.message_id), text.strip(), bool(message.thread_id)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    handler = lark.EventDispatcherHandler.builder("", "").register_p2_im_message_receive_v1(on_message).build()
    lark.ws.Client(app_id, secret, event_handler=handler, domain=domain, log_level=lark.LogLevel.WARNING).start()


if __name__ == "__main__":
    main()
