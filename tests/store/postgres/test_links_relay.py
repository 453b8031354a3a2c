"""A link made on one replica is in force on the other at once: each replica holds the links in memory and
re-reads them when another announces a change over the relay (LISTEN/NOTIFY), real PostgreSQL."""

from __future__ import annotations

import asyncio
import time

from bot.chats.links import ChatLinks
from bot.chats.sessions import SessionKey
from bot.store.postgres import PostgresStore
from tests.postgres import PostgresServer


async def test_a_link_made_on_one_replica_holds_on_the_other_within_moments(postgres: PostgresServer) -> None:
    url = await postgres.new_database()
    stores = [PostgresStore(url, replica=name) for name in ("a", "b")]
    try:
        for store in stores:
            await store.open()
            assert store.relay is not None
            await store.relay.start()
        a, b = (ChatLinks(s.handoffs, s.relay) for s in stores)
        for links in (a, b):
            await links.start()
        alias, home = SessionKey("discord", "7"), SessionKey("telegram", "42")
        assert b.resolved(alias) == alias
        started = time.monotonic()
        await a.link(alias, home.storage_key)
        assert a.resolved(alias) == home  # in force where it was made, before the call returns
        while b.resolved(alias) != home:
            assert time.monotonic() - started < 2.0, "the other replica never heard of the link"
            await asyncio.sleep(0.01)
        print(f"\na link reached the other replica in {(time.monotonic() - started) * 1000:.0f} ms")
        await b.unlink(alias)
        while a.resolved(alias) != alias:
            assert time.monotonic() - started < 4.0, "the unlink never reached the first replica"
            await asyncio.sleep(0.01)
        for links in (a, b):
            links.stop()
    finally:
        for store in stores:
            if store.relay is not None:
                await store.relay.stop()
            await store.close()
