"""A chat's replies leave only from the replica that owns the chat. Work in a chat's lane names its chat here
(`answering`); every platform call of a delivery made from that work confirms the ownership first (no
database call while the replica's heartbeat is recent), and again as late as the platform's HTTP client allows:
once the request holds its connection, right before its first bytes are written (`before_request` for httpx,
`fenced_trace` for aiohttp). A request can wait for a free connection of its pool for a long time under load; a
replica frozen in that wait, or anywhere between a check and the bytes, would otherwise send them on waking. A
replica frozen mid-answer that wakes after its chats were taken over then sends nothing: the survivor answers
those messages, once. Replies made outside a lane (a refusal at intake) are not fenced: any replica may make
them. It sits in the HTTP kit so that adapters can hook their clients to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import aiohttp
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
    and again once it has one, right before its headers are written (httpcore's `trace` extension). Its
    NotOwner surfaces as the client's (or SDK's) own error: the request never leaves."""
    await still_owner()
    if answering.get() is not None:
        request.extensions["trace"] = _at_the_wire


async def _at_the_wire(event: str, _info: dict[str, Any]) -> None:
    if event.endswith(".send_request_headers.started"):  # http11.… or http2.…: the connection is this request's
        await still_owner()


def fenced_trace() -> aiohttp.TraceConfig:
    """aiohttp's form of `before_request`, for a session an adapter makes: each request starts with the check, and
    checks again once the connector gave it a connection (new or reused), right before its headers are written
    (its NotOwner propagates as itself; aiohttp gives the connection back)."""
    async def check(_session: aiohttp.ClientSession, _context: Any, _params: Any) -> None:
        await still_owner()

    trace = aiohttp.TraceConfig()
    for signal in (trace.on_request_start, trace.on_connection_create_end, trace.on_connection_reuseconn):
        signal.append(check)
    return trace
