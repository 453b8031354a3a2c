"""The model call every baseline bot makes, written as a thin bot would: the official openai SDK, no history."""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import openai

EDIT_EVERY = 1.0  # seconds: the simplest throttle, one edit a second at most
Handle = TypeVar("Handle")


def streaming() -> bool:
    """`--stream` on the command line: edit one message as the answer grows instead of sending it once."""
    return "--stream" in sys.argv[1:]


class Model:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.client = openai.AsyncOpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env.get("OPENAI_API_KEY") or "none")
        self.model = env.get("BOTHUB_MODEL", "fake-model")

    async def answer(self, text: str, send: Callable[[str], Awaitable[Handle]],
                     edit: Callable[[Handle, str], Awaitable[object]], stream: bool) -> None:
        """Send the whole answer once, or (stream) send its first words and then edit the message with the text
        so far at most once per EDIT_EVERY, and a last time with the whole answer."""
        chunks = await self.client.chat.completions.create(
            model=self.model, messages=[{"role": "user", "content": text}], stream=True)
        parts: list[str] = []
        handle: Handle | None = None
        shown, last = "", 0.0
        async for chunk in chunks:
            if not chunk.choices or not chunk.choices[0].delta.content:
                continue
            parts.append(chunk.choices[0].delta.content)
            if not stream:
                continue
            so_far = "".join(parts)
            if handle is None:
                handle, shown, last = await send(so_far), so_far, time.monotonic()
            elif time.monotonic() - last >= EDIT_EVERY:
                await edit(handle, so_far)
                shown, last = so_far, time.monotonic()
        whole = "".join(parts) or "…"
        if handle is None:
            await send(whole)
        elif shown != whole:
            await edit(handle, whole)
