"""Waiting, on the replica that received a message, for its answer made on the chat's owner: done once every
inbox entry of the chat accepted so far has left the inbox (the owner finishes an entry after delivering its
answer). A finished entry wakes the wait through the relay; a check each second covers a missed wake-up."""

from __future__ import annotations

import asyncio
import contextlib

from bot.adapter import Relay
from bot.store.inbox import InboxStore

RECHECK = 1.0  # seconds between checks when no wake-up came


async def answered_elsewhere(relay: Relay, inbox: InboxStore, session: str) -> None:
    woken = asyncio.Event()
    stop = relay.listen(f"done:{session}", lambda _event: woken.set())  # before the first look: none is missed
    try:
        waiting = await inbox.waiting(session)
        if not waiting:
            return
        last = waiting[-1].id
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), RECHECK)
            woken.clear()
            if not any(entry.id <= last for entry in await inbox.waiting(session)):
                return
    finally:
        stop()
