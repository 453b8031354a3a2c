"""Slack's assistant surface (Agents & AI apps): a thread in the app's DM shows "is thinking…" while an answer
runs, opens with suggested prompts, and is titled after its first question.

Slack clears the status itself when the app replies in the thread, so it is set once per answer, not on every
"typing" tick (assistant.threads.setStatus is a Tier 3 method). All of it is decoration: a refusal is logged,
never raised into the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.messages import ChatRef

log = logging.getLogger("bothub.slack")
MAX_TITLE = 60
TEXT = {
    "en": {"thinking": "is thinking…", "prompts": "Try one of these",
           "p1": ("What can you do?", "What can you do, and which commands do you know?"),
           "p2": ("Summarize a text", "Summarize the text I paste next in five bullet points."),
           "p3": ("Show my conversations", "/list")},
    "zh": {"thinking": "正在思考…", "prompts": "试试这些",
           "p1": ("你能做什么？", "你能做什么？你知道哪些命令？"),
           "p2": ("总结一段文字", "把我接下来贴的文字总结成五个要点。"),
           "p3": ("查看我的对话", "/list")},
}


class Assistant:
    def __init__(self, web: AsyncWebClient, language: str) -> None:
        self._web = web
        self._text = TEXT.get(language, TEXT["en"])
        self._thinking: set[tuple[str, str]] = set()  # threads whose status is set until the next reply

    async def thinking(self, chat: ChatRef) -> None:
        thread = (chat.chat_id, chat.thread_id or "")
        if thread in self._thinking:
            return
        self._thinking.add(thread)
        await self._quietly("setStatus", self._web.assistant_threads_setStatus(
            channel_id=thread[0], thread_ts=thread[1], status=str(self._text["thinking"])))

    def answered(self, chat: ChatRef) -> None:
        self._thinking.discard((chat.chat_id, chat.thread_id or ""))

    async def greet(self, channel: str, thread_ts: str) -> None:
        prompts = [{"title": title, "message": message}
                   for title, message in (self._text["p1"], self._text["p2"], self._text["p3"])]
        await self._quietly("setSuggestedPrompts", self._web.assistant_threads_setSuggestedPrompts(
            channel_id=channel, thread_ts=thread_ts, prompts=prompts, title=str(self._text["prompts"])))

    async def title(self, channel: str, thread_ts: str, question: str) -> None:
        line = " ".join(question.split())
        title = line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1].rstrip() + "…"
        await self._quietly("setTitle", self._web.assistant_threads_setTitle(
            channel_id=channel, thread_ts=thread_ts, title=title))

    @staticmethod
    async def _quietly(what: str, call: Awaitable[object]) -> None:
        try:
            await call
        except SlackApiError as e:
            log.info("slack: assistant %s refused: %s", what, e.response.get("error"))
        except Exception as e:  # decoration only: never break the answer
            log.info("slack: assistant %s failed: %s", what, type(e).__name__)
