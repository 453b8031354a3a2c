"""Drivers of the HTTP adapters: a real aiohttp client on 127.0.0.1, reading replies as server-sent events.

The web chat is driven like a browser tab: the page gives the session's CSRF token and chat, one event
stream stays open (reopened when the server ends it, as EventSource does), a message is a POST. The API
is driven like a calling system: each message is a POST with a bearer token that streams its answer.

Frames cross a socket, so a driver syncs before it reads the screen: it has the adapter put a marker
into each open stream (the web chat's "typing" event, a marker reply for an API request) and waits for it;
every frame sent before the marker has arrived by then.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import aiohttp

from adapters.api import SPEC as API_SPEC
from adapters.api.config import ApiConfig
from adapters.web import SPEC as WEB_SPEC
from adapters.web import WebConfig
from bot.adapter import TokenHolder, WebHandler
from bot.messages import ChatRef, IncomingMessage, ReplyTo, SentRef
from bot.replies import Reply
from tests.adapters.contract.driver import Driver, serve_routes, services, sign_in

Frame = tuple[str, dict[str, Any]]  # (event, data)


class Stream:
    """One open event stream, parsed as its frames arrive; `changed` wakes whoever waits on it."""

    def __init__(self, response: aiohttp.ClientResponse, on_frame: Callable[[Frame], None]) -> None:
        self._response = response
        self._on_frame = on_frame
        self.ended = False
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        buffer = b""
        try:
            async for chunk in self._response.content.iter_any():  # a frame may exceed any line limit
                buffer += chunk
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    if frame := _parse(block.decode()):
                        self._on_frame(frame)
                        self._changed.set()
        except aiohttp.ClientError:
            pass  # the driver closed its client
        finally:
            self.ended = True
            self._changed.set()
            self._response.release()

    async def until(self, done: Callable[[], bool], within: float = 10.0) -> bool:
        """Wait until `done()` holds (True) or the stream has ended (False)."""
        async with asyncio.timeout(within):
            while not done():
                if self.ended:
                    return False
                self._changed.clear()
                await self._changed.wait()
        return True

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def _parse(block: str) -> Frame | None:
    """`event: x` and `data: {...}` lines; a comment-only block (": keepalive") is no frame."""
    fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line and not line.startswith(":"))
    return (fields["event"], json.loads(fields["data"])) if "data" in fields else None


class Screen:
    """What a chat shows: each message's latest text and whether it is still being written, in arrival order."""

    def __init__(self) -> None:
        self.messages: dict[str, tuple[str, bool]] = {}

    def update(self, message_id: str, text: str, final: bool) -> None:
        self.messages[message_id] = (text, not final)

    def texts(self, hide: Callable[[str], bool] = lambda _text: False) -> list[str]:
        return [text for text, _ in self.messages.values() if not hide(text)]


def _html_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).strip()


class WebDriver(Driver):
    name, limit = "web", 100_000
    platform_can = frozenset({"buttons", "can_edit"})  # one browser session is one chat; sending only queues
    columns = 4  # the page lays a message's answers out in a row

    async def start(self) -> None:
        routes: list[tuple[str, str, WebHandler]] = []
        self.adapter = WEB_SPEC.create(WebConfig(), {}, services(routes))
        self._runner, self._base = await serve_routes(routes)
        self._http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))  # cookies for 127.0.0.1
        await sign_in(self._http, self._runner, self._base)
        async with self._http.get(f"{self._base}/webchat") as page:
            text = await page.text()
        self._csrf = _found(r'name="csrf-token" content="([^"]+)"', text)
        self._chat = ChatRef("web", _found(r"chat=web%3A([0-9a-f]+)", text))
        self._screen = Screen()
        self._typings = 0
        self._answered_ok = True
        self._tab: Stream | None = None
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        if self._tab is not None:
            await self._tab.close()
        await self._http.close()
        await self._runner.cleanup()

    def _frame(self, frame: Frame) -> None:
        event, data = frame
        if event == "typing":
            self._typings += 1
        elif event == "message":
            shown = [data["html"]] + [f'{c["title"]}\n{c["html"]}' for c in data["columns"]]
            self._screen.update(data["id"], "\n".join(_html_text(part) for part in shown if part), data["final"])

    async def _sync(self) -> None:
        """Until a typing marker came through the open tab (a tab the server ended is reopened first)."""
        while True:
            if self._tab is None or self._tab.ended:
                response = await self._http.get(f"{self._base}/webchat/events")
                assert response.status == 200, await response.text()
                self._tab = Stream(response, self._frame)
            marker = self._typings + 1
            await self.adapter.typing(self._chat)
            if await self._tab.until(lambda marker=marker: self._typings >= marker):
                return

    async def _post(self, body: dict[str, Any]) -> None:
        text = await self._send(body)
        assert self._answered_ok, text

    async def _send(self, body: dict[str, Any]) -> str:
        """The page's POST; the answer's body (202: the hub has it)."""
        await self._sync()
        async with self._http.post(f"{self._base}/webchat/send", json=body,
                                   headers={"X-CSRF-Token": self._csrf}) as resp:
            self._answered_ok = resp.status == 202
            return await resp.text()

    async def inject(self, event: dict[str, Any]) -> None:
        await self._post(event["json"])

    async def offer(self, event: dict[str, Any]) -> None:
        self._offered: dict[str, Any] = event["json"]
        await self._send(self._offered)

    async def offer_again(self) -> None:
        """The person sends it again, as the page's "not sent" line asks."""
        await self._post(self._offered)

    def confirmed(self) -> bool:
        return self._answered_ok

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        await self._post(event["json"])  # the page sends the button's action with "button": true

    async def shown(self, chat: ChatRef) -> list[str]:
        assert chat.chat_id == self._chat.chat_id
        await self._sync()
        return self._screen.texts()

    async def stream_open(self, ref: SentRef) -> bool:
        await self._sync()
        return self._screen.messages[ref.message_id][1]

    def links(self) -> int:
        return int(self._tab is not None and not self._tab.ended)  # the tab's event stream

    async def shown_after_stop(self, chat: ChatRef) -> list[str]:
        return self._screen.texts()  # the stream has ended: every frame sent has arrived


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match is not None, f"{pattern!r} not in the page"
    return match.group(1)


class ApiDriver(Driver):
    name, limit = "api", 1_000_000
    platform_can = frozenset({"buttons", "can_edit"})  # buttons come back as actions; a reply only queues
    TOKEN = "bothub_contract-token"
    HOLDER = TokenHolder("c0ffee000001", "contract tests", hashlib.sha256(TOKEN.encode()).hexdigest())
    MARK = "\x00sync "

    async def start(self) -> None:
        routes: list[tuple[str, str, WebHandler]] = []
        self._finished = asyncio.Event()  # the "hub" has answered everything: requests may complete
        self.adapter = API_SPEC.create(ApiConfig(burst=100, callback_timeout=0.2), {},
                                       services(routes, answered=self._answered, check_token=self._check))
        self._runner, self._base = await serve_routes(routes)
        self._http = aiohttp.ClientSession()
        self._screen = Screen()
        self._answered_ok = True
        self._requests: list[tuple[IncomingMessage, Stream]] = []
        self._marks = itertools.count()
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        self._finished.set()
        for _, stream in self._requests:
            await stream.close()
        await self.adapter.stop()
        await self._http.close()
        await self._runner.cleanup()

    async def _answered(self, _chat: ChatRef) -> None:
        await self._finished.wait()

    async def _check(self, token: str) -> TokenHolder | None:
        return self.HOLDER if token == self.TOKEN else None

    def _frame(self, frame: Frame) -> None:
        event, data = frame
        if event == "reply":
            self._screen.update(data["id"], data["text"], data["final"])

    async def _sync(self, chat_id: str | None = None) -> None:
        """Until a marker reply came through every open request of the chat (of every chat: None)."""
        for message, stream in self._requests:
            if chat_id in (None, message.chat_id) and not stream.ended:
                mark = f"{self.MARK}{next(self._marks)}"
                await self.adapter.send(ChatRef("api", message.chat_id, origin=ReplyTo(message.message_id)),
                                        Reply(mark))
                await stream.until(lambda mark=mark: mark in self._screen.texts())

    async def inject(self, event: dict[str, Any]) -> None:
        """POST the message; its answer streams back while the test goes on."""
        text = await self._ask(event)
        assert self._answered_ok, text

    async def offer(self, event: dict[str, Any]) -> None:
        self._offered: dict[str, Any] = event
        await self._ask(event)

    async def offer_again(self) -> None:
        """The calling system sends it again, as the 503 asks."""
        await self.inject(self._offered)

    def confirmed(self) -> bool:
        return self._answered_ok

    async def _ask(self, event: dict[str, Any]) -> str:
        """The request; the body of a refusal ("" when its answer streams)."""
        await self._sync()  # what earlier requests were sent is on the screen before this one starts
        handed = len(self.inbox.handed)
        response = await self._http.post(
            f"{self._base}/api/v1/chat/{event['key']}/messages", json=event["body"],
            headers={"Authorization": f"Bearer {self.TOKEN}", "Accept": "text/event-stream"})
        self._answered_ok = response.status == 200
        if not self._answered_ok:
            async with response:
                return await response.text()
        (message,) = self.inbox.handed[handed:]  # the adapter handed it over before answering the stream
        assert isinstance(message, IncomingMessage)
        self._requests.append((message, Stream(response, self._frame)))
        return ""

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        await self.inject(event)  # pressing an action is sending its command

    async def shown(self, chat: ChatRef) -> list[str]:
        await self._sync(chat.chat_id)
        return self._screen.texts(hide=lambda text: text.startswith(self.MARK))

    async def stream_open(self, ref: SentRef) -> bool:
        await self._sync(ref.chat.chat_id)
        return self._screen.messages[ref.message_id][1]

    def links(self) -> int:
        return sum(not stream.ended for _, stream in self._requests)  # requests still streaming their answer

    async def shown_after_stop(self, chat: ChatRef) -> list[str]:
        return self._screen.texts(hide=lambda text: text.startswith(self.MARK))  # every stream has ended

    def answered(self) -> None:
        self._finished.set()
