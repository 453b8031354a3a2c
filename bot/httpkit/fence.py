"""A chat's replies leave only from the replica that owns the chat. Work in a chat's lane names its chat here
(`answering`); every platform call of a delivery made from that work confirms the ownership first (no
database call while the replica's heartbeat is recent), and again as late as the platform's HTTP client allows:
once the request holds its connection, right before its bytes are written (`before_request` for httpx, before
the headers and before the body; `fenced_trace` for aiohttp, as the headers are buffered). A request can wait for
a free connection of its pool for a long time under load, and a body leaves a turn of the event loop after its
headers; a replica frozen there, or anywhere between a check and the bytes, would otherwise send them on waking. A
replica frozen mid-answer that wakes after its chats were taken over then sends nothing: the survivor answers
those messages, once. Replies made outside a lane (a refusal at intake) are not fenced: any replica may make
them. It sits in the HTTP kit so that adapters can hook their clients to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import aiohttp

if TYPE_CHECKING:  # httpx's own import loads its command line's click and pygments: only for the type
    import httpx

Confirm = Callable[[], Awaitable[None]]  # raises NotOwner (bot.store.claims) once the chat is another's

answering: ContextVar[Confirm | None] = ContextVar("bothub_answering", default=None)


async def still_owner() -> None:
    """Before a platform call: NotOwner when the lane this runs in no longer belongs to this replica."""
    confirm = answering.get()
    if confirm is not None:
        await confirm()


async def before_request(request: httpx.Request) -> None:
    """httpx's request hook (`event_hooks["request"]`): `still_owner` before the request waits for a connection,
    and again once it has one, right before its headers and right before its body are written (httpcore's `trace`
    extension; nothing yields between that check and the body's bytes). Its NotOwner surfaces as the client's (or
    SDK's) own error: the request, or its body, never leaves."""
    await still_owner()
    if answering.get() is not None:
        request.extensions["trace"] = _at_the_wire


async def _at_the_wire(event: str, _info: dict[str, Any]) -> None:
    # http11.… or http2.…: the connection is this request's; its headers leave at once, and its body a turn of the
    # event loop later (a replica frozen in between sent the body on waking, and the platform took the request)
    if event.endswith((".send_request_headers.started", ".send_request_body.started")):
        await still_owner()


def fenced_trace() -> aiohttp.TraceConfig:
    """aiohttp's form of `before_request`, for a session an adapter makes: each request starts with the check, and
    checks again once it holds its connection, as its headers are buffered (aiohttp sends them with the body, from a
    task of their own: one turn of the event loop later; it has no hook nearer the bytes). Its NotOwner propagates
    as itself; aiohttp gives the connection back."""
    async def check(_session: aiohttp.ClientSession, _context: Any, _params: Any) -> None:
        await still_owner()

    trace = aiohttp.TraceConfig()
    for signal in (trace.on_request_start, trace.on_request_headers_sent):
        signal.append(check)
    return trace
