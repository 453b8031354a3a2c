"""What every contract driver offers the tests: recorded payloads in, the chat as it reads now out.

A driver starts the real adapter against its real transport (a fake platform server on 127.0.0.1, an
HTTP client, the terminal's streams) and speaks for the test. `platform_can` is the driver's own
statement of what the platform does, held against the adapter's declared `Capabilities`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bot.adapter import Adapter, AdapterServices, ConversationChoice, NotKept, TokenHolder, WebHandler
from bot.commands import menu
from bot.httpkit.auth import Auth
from bot.httpkit.security import AUTH, security
from bot.messages import ChatRef, InboundEvent, SentRef
from bot.web.login import login_page
from tests.fakes.serve import serve_local

PAYLOADS = Path(__file__).resolve().parents[2] / "payloads"
# the Capabilities flags a platform may lack; each driver names those its platform has
ABILITIES = ("groups", "overhears", "buttons", "replace_pressed", "can_edit", "refuses_sends", "feedback")


def payload(platform: str, case: str) -> dict[str, Any]:
    """tests/payloads/<platform>/<case>.json: {"about", "event", "expect"}."""
    data: dict[str, Any] = json.loads((PAYLOADS / platform / f"{case}.json").read_text(encoding="utf-8"))
    return data


class Inbox:
    """What the adapter handed to the hub, in order. `hold` makes the next hand-over wait, as a slow inbox
    write would, until the test lets it through; `refuse` makes the next one fail as a failed inbox write does
    (NotKept); `accepted` is what got through (the hub has it)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[InboundEvent] = asyncio.Queue()
        self.handed: list[InboundEvent] = []
        self.accepted: list[InboundEvent] = []
        self.arriving = asyncio.Event()
        self._gate: asyncio.Event | None = None
        self._refusing: asyncio.Event | None = None

    def hold(self) -> asyncio.Event:
        """The gate the next hand-overs wait at; `arriving` is set once one does."""
        self.arriving.clear()
        self._gate = asyncio.Event()
        return self._gate

    def refuse(self) -> asyncio.Event:
        """The next hand-over raises NotKept; the event is set once it did."""
        self._refusing = asyncio.Event()
        return self._refusing

    async def __call__(self, message: InboundEvent) -> None:
        self.handed.append(message)
        if (refusing := self._refusing) is not None:
            self._refusing = None
            refusing.set()
            raise NotKept("the contract's inbox refused it, as a failed inbox write does")
        if self._gate is not None:
            self.arriving.set()
            await self._gate.wait()
        self.accepted.append(message)
        await self.queue.put(message)

    async def next(self, within: float = 5.0) -> InboundEvent:
        return await asyncio.wait_for(self.queue.get(), within)


async def _no_conversations(_chat: ChatRef, _user_id: str) -> list[ConversationChoice]:
    return []


def services(routes: list[tuple[str, str, WebHandler]], *, answered: Callable[[ChatRef], Awaitable[None]] | None = None,
             check_token: Callable[[str], Awaitable[TokenHolder | None]] | None = None) -> AdapterServices:
    seen: set[str] = set()

    async def is_seen(key: str) -> bool:
        was = key in seen
        seen.add(key)
        return was

    async def unsee(key: str) -> None:
        seen.discard(key)

    return AdapterServices(_no_conversations, is_seen, lambda m, p, h: routes.append((m, p, h)), commands=menu(),
                           answered=answered, check_token=check_token, unsee=unsee)


async def serve_routes(routes: list[tuple[str, str, WebHandler]]) -> tuple[web.AppRunner, str]:
    """The routes an adapter added, on a server like the hub's: the kit's security middleware in front, no
    password, so a browser signs in with the one-time link (`sign_in`). A stream whose client went away ends at
    once, not at its next keepalive."""
    app = web.Application(middlewares=[security])
    app[AUTH] = Auth(None)
    app.router.add_get("/login", login_page)
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    runner, port = await serve_local(app, handler_cancellation=True)
    return runner, f"http://127.0.0.1:{port}"


async def sign_in(http: aiohttp.ClientSession, runner: web.AppRunner, base: str) -> None:
    """Open the server's one-time sign-in link, as the person who started the hub would."""
    async with http.get(f"{base}/login?token={runner.app[AUTH].sign_in_token}", allow_redirects=False) as signed:
        assert signed.status == 303, signed.status


class Driver:
    name: str
    limit: int  # the platform's own ceiling for one message's text
    platform_can: frozenset[str]  # which of ABILITIES the platform has
    columns = 0  # answers one message of the platform can show side by side (Capabilities.columns)
    # the transport tells the platform (or the person) whether an event was kept: an ACK, a 2xx, a confirmed
    # offset, a notice; False where it has no such answer (Discord's gateway, WeCom's long connection)
    acknowledges = True
    adapter: Adapter

    def __init__(self) -> None:
        self.inbox = Inbox()

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def inject(self, event: dict[str, Any]) -> None:
        """Deliver one recorded platform payload, as the platform would."""
        raise NotImplementedError

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        """Deliver a recorded button press on a message the bot sent."""
        raise NotImplementedError

    async def offer(self, event: dict[str, Any]) -> None:
        """`inject`, for an event the adapter may not get kept: a refusal is no failure here; `confirmed()` says
        what the platform was told."""
        raise NotImplementedError

    async def offer_again(self) -> None:
        """The platform's redelivery of the event last offered, under the same ids (a person at a terminal or a
        browser sends it again); nothing where the platform hands it over again by itself."""
        raise NotImplementedError

    async def shown(self, chat: ChatRef) -> list[str]:
        """The bot's messages in the chat as they read now, oldest first."""
        raise NotImplementedError

    async def shown_after_stop(self, chat: ChatRef) -> list[str]:
        """`shown`, once the adapter has stopped (a driver that syncs through the adapter reads what arrived)."""
        return await self.shown(chat)

    # only for a platform with native feedback controls (feedback):
    async def rate(self, answer: SentRef, good: bool) -> None:
        """A person presses the 👍 (or 👎) the platform draws under the bot's message."""
        raise NotImplementedError

    async def stream_open(self, ref: SentRef) -> bool:
        """Whether the platform still shows the message as being written."""
        return False

    def links(self) -> int:
        """How many connections from the bot the platform (its fake server, the browser) still sees open."""
        raise NotImplementedError

    def confirmed(self) -> bool:
        """Whether the platform counts every event injected so far as delivered (it will not send it again).
        Where an injection returns only once the platform has its acknowledgement, its return says so."""
        return True

    def answered(self) -> None:
        """The hub has finished answering (a stop comes after its drain): nothing the adapter holds waits on it."""

    # only for a platform that refuses sends (refuses_sends):
    def send_attempts(self) -> int:
        raise NotImplementedError

    def rate_limit_next_send(self) -> None:
        raise NotImplementedError

    def chat_gone(self, chat: ChatRef) -> None:
        raise NotImplementedError
