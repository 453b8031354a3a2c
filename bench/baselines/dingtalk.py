"""The DingTalk yardstick: the dingtalk-stream SDK as its examples use it (see bench/baselines/__init__.py).

`DingTalkStreamClient.start()` opens the connection and fetches tokens with blocking `requests`, and every
reply helper (`reply_markdown`, the AI card's `ai_start` / `ai_streaming` / `ai_finish`) is blocking too, so
they run in worker threads. The whole answer is one Markdown reply through the message's session webhook; with
`--stream`, one AI card whose Markdown is streamed at most once a second. No retries: a refusal loses the
answer. Configured like bothub by DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, DINGTALK_API_BASE,
OPENAI_BASE_URL, OPENAI_API_KEY and BOTHUB_MODEL.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from bench.baselines.model import Model, streaming


def main() -> None:
    env, stream = dict(os.environ), streaming()
    os.environ["DINGTALK_OPENAPI_ENDPOINT"] = env["DINGTALK_API_BASE"]  # the SDK reads its endpoint at import
    import dingtalk_stream
    from dingtalk_stream import AckMessage, AIMarkdownCardInstance, ChatbotHandler, ChatbotMessage

    client = dingtalk_stream.DingTalkStreamClient(
        dingtalk_stream.Credential(env["DINGTALK_CLIENT_ID"], env["DINGTALK_CLIENT_SECRET"]))
    client.get_host_ip = lambda: "127.0.0.1"  # the SDK would probe a public address for its local IP
    model = Model(env)
    tasks: set[asyncio.Task[None]] = set()

    async def answer(handler: Any, incoming: Any, text: str) -> None:
        if not stream:
            async def send(reply: str) -> None:
                await asyncio.to_thread(handler.reply_markdown, "answer", reply, incoming)

            await model.answer(text, send, lambda _h, _r: asyncio.sleep(0), False)
            return
        card = AIMarkdownCardInstance(client, incoming)

        async def start(reply: str) -> Any:
            await asyncio.to_thread(card.ai_start)
            await asyncio.to_thread(card.ai_streaming, reply)
            return card

        async def edit(_card: Any, reply: str) -> None:
            await asyncio.to_thread(card.ai_streaming, reply)

        await model.answer(text, start, edit, True)
        await asyncio.to_thread(card.ai_finish)

    class Robot(ChatbotHandler):  # type: ignore[misc]
        async def process(self, callback: Any) -> tuple[int, str]:
            incoming = ChatbotMessage.from_dict(callback.data)
            text = incoming.text.content.strip() if incoming.text else ""
            task = asyncio.get_running_loop().create_task(answer(self, incoming, text))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            return AckMessage.STATUS_OK, "OK"

    client.register_callback_handler(ChatbotMessage.TOPIC, Robot())
    asyncio.run(client.start())


if __name__ == "__main__":
    main()
