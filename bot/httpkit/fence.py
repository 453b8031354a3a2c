"""A chat's replies leave only from the replica that owns the chat. Work in a chat's lane names its chat here
(`answering`); every platform call of a delivery made from that work confirms the ownership first (no
database call while the replica's heartbeat is recent), and again as late as the platform's HTTP client allows
(`before_request`, its request hook: a replica frozen between the first check and the request's bytes would
otherwise send them on waking). A replica frozen mid-answer that wakes after its chats were taken over then
sends nothing: the survivor answers those messages, once. Replies made outside a lane (a refusal at intake) are
not fenced: any replica may make them. It sits in the HTTP kit so that adapters can hook their clients to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import aiohttp

Confirm = Callable[[], Awaitable[None]]  # raises NotOwner (bot.store.claims) once the chat is another's

answering: ContextVar[Confirm | None] = ContextVar("bothub_answering", default=None)


async def still_owner() -> None:
    """Before a platform call: NotOwner when the lane this runs in no longer belongs to this replica."""
    confirm = answering.get()
    if confirm is not None:
        await confirm()


async def before_request(_request: object) -> None:
    """An HTTP client's request hook (httpx's `event_hooks["request"]`): `still_owner` right before the request
    is sent. Its NotOwner surfaces as the client's (or SDK's) own error: the request never leaves."""
    await still_owner()


def fenced_trace() -> aiohttp.TraceConfig:
    """aiohttp's form of `before_request`, for a session an adapter makes: each request starts with the check (its
    NotOwner propagates as itself)."""
    async def on_start(_session: aiohttp.ClientSession, _context: Any, _params: Any) -> None:
        await still_owner()

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    return trace
