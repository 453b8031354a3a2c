"""The contract every platform adapter fulfils, and the typed failures the hub handles in one place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

MessageHandler = Callable[[IncomingMessage], Awaitable[None]]


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
    name: str
    capabilities: Capabilities

    async def start(self, on_message: MessageHandler) -> None: ...

    async def stop(self) -> None: ...

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef: ...

    async def edit(self, ref: SentRef, reply: Reply) -> None: ...

    async def typing(self, chat: ChatRef) -> None: ...
