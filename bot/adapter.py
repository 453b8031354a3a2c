"""The contract every platform adapter fulfils, and the typed failures the hub handles in one place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from aiohttp import web

from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

MessageHandler = Callable[[IncomingMessage], Awaitable[None]]
WebHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class ConversationChoice:
    id: str
    title: str


@dataclass(frozen=True, slots=True)
class AdapterServices:
    """What the core lends an adapter: read-only queries, persisted dedupe and the hub's web server."""

    list_conversations: Callable[[ChatRef], Awaitable[list[ConversationChoice]]]  # e.g. Discord autocomplete
    seen: Callable[[str], Awaitable[bool]]  # records an event key; True if it was already handled
    add_route: Callable[[str, str, WebHandler], None]  # (method, path, handler) on the hub's aiohttp server
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a platform allows; the hub's streaming and chunking read these instead of platform names."""

    max_text: int  # characters per message, after rendering
    can_edit: bool = True
    edit_interval: float = 1.0  # seconds between edits of one message in a private chat
    group_edit_interval: float = 3.0  # same, in groups
    buttons: bool = True
    tree_budget: int = 3500  # characters a /tree rendering may use
    burst: int = 5  # per-chat sends+edits allowed at once before pacing applies
    rate: float = 1.0  # per-chat sends+edits per second after the burst
    group_send_window: tuple[int, float] = (20, 60.0)  # at most N new messages into one group per T seconds
    global_window: tuple[int, float] = (30, 1.0)  # at most N sends+edits over all chats per T seconds


class SendError(Exception):
    """Base of the failures an adapter may raise from send/edit."""


class RateLimited(SendError):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited, retry after {retry_after:.1f}s")
        self.retry_after = retry_after


class ChatUnavailable(SendError):
    """The bot was blocked, kicked or lacks permission: stop sending to this chat."""


class SendFailed(SendError):
    """Any other failure; the message says what the platform answered."""


class Adapter(Protocol):
    """Each adapter package exposes `create(config, env, services) -> Adapter` in its adapter.py."""

    name: str
    capabilities: Capabilities

    async def start(self, on_message: MessageHandler) -> None: ...

    async def stop(self) -> None: ...

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef: ...

    async def edit(self, ref: SentRef, reply: Reply) -> None: ...

    async def typing(self, chat: ChatRef) -> None: ...

    def connected(self) -> bool:
        """For /readyz and the watchdog: is the polling loop / gateway / long connection alive?"""
        ...
