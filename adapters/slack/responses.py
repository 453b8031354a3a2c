"""Answers to a slash command (or a press on its reply) where the app is not a member: Slack refuses
chat.postMessage and chat.update there (not_in_channel), but every command and press comes with a
`response_url` that may post into its channel — up to five times within 30 minutes — and replace the message
it belongs to. So a command's reply still arrives before anyone invited the app; once invited, replies go
through the Web API as everywhere. Only Slack's own hooks host (or the configured API base's host, for a proxy
or a fake) is posted to: the URL comes inside an event, and the hub must not POST wherever one says.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.adapter import SendFailed
from bot.messages import ButtonPress, ChatRef, Interaction

HOOKS = "https://hooks.slack.com"
USES = 5  # posts Slack allows through one response_url
VALID = 30 * 60.0  # seconds a response_url stays valid
REMEMBERED = 1024
PREFIX = "response:"  # the SentRef message id of a reply posted this way (Slack gives it no ts)


@dataclass
class _Url:
    url: str
    given: float
    used: int = 0


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Responses:
    def __init__(self, session: Callable[[], aiohttp.ClientSession], api_base: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._session = session
        self._hosts = frozenset({HOOKS, host_of(api_base)})
        self._clock = clock
        self._urls: OrderedDict[str, _Url] = OrderedDict()  # a command's trigger or a press's id → its response_url

    def remember(self, origin: str, url: object) -> None:
        if not isinstance(url, str) or host_of(url) not in self._hosts:
            return
        self._urls[origin] = _Url(url, self._clock())
        while len(self._urls) > REMEMBERED:
            self._urls.popitem(last=False)

    def usable(self, chat: ChatRef) -> str | None:
        """The command or press this reply answers, if its response_url can still post."""
        origin = chat.origin
        key = (origin.interaction_id if isinstance(origin, Interaction)
               else origin.press_id if isinstance(origin, ButtonPress) else None)
        return key if key is not None and self.live(key) else None

    def live(self, key: str) -> bool:
        found = self._urls.get(key)
        return found is not None and found.used < USES and self._clock() - found.given <= VALID

    async def post(self, key: str, text: str, blocks: list[dict[str, Any]] | None, *, replace: bool) -> str:
        """Post into the command's channel, visible to all, or replace the message the press or earlier post
        was on; the message id of its SentRef."""
        found = self._urls[key]
        found.used += 1
        body: dict[str, Any] = {"response_type": "in_channel", "text": text, "replace_original": replace}
        if blocks:
            body["blocks"] = blocks
        try:
            async with self._session().post(found.url, json=body) as answer:
                said = await answer.text()
        except (aiohttp.ClientError, TimeoutError) as e:
            raise SendFailed(f"cannot reach Slack's response_url: {type(e).__name__}") from e
        if answer.status != 200:
            raise SendFailed(f"response_url refused the reply ({answer.status}: {said[:80]})")
        return PREFIX + key
