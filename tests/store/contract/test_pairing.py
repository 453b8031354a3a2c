"""Pairing: one live code per user, approval spends it, expiry, platforms apart."""

from __future__ import annotations

import asyncio

from bot.store import Store
from tests.store.conftest import StoreFactory

NOW = 1_000_000.0


async def test_a_code_is_kept_until_it_expires_then_replaced(store: Store) -> None:
    assert await store.pairing.code_for("telegram", "u1", "AAAA2222", NOW + 60, NOW) == "AAAA2222"
    assert await store.pairing.code_for("telegram", "u1", "BBBB3333", NOW + 90, NOW + 30) == "AAAA2222"
    assert await store.pairing.approve("telegram", "AAAA2222", NOW + 60) is None  # expired at NOW + 60
    assert await store.pairing.code_for("telegram", "u1", "CCCC4444", NOW + 200, NOW + 61) == "CCCC4444"
    assert await store.pairing.approve("telegram", "AAAA2222", NOW + 62) is None
    assert not await store.pairing.is_paired("telegram", "u1")


async def test_approval_spends_the_code_and_stays_on_its_platform(store: Store) -> None:
    await store.pairing.code_for("telegram", "u1", "AAAA2222", NOW + 60, NOW)
    await store.pairing.code_for("discord", "u1", "DDDD5555", NOW + 60, NOW)
    assert await store.pairing.approve("discord", "AAAA2222", NOW) is None  # telegram's code
    assert await store.pairing.approve("telegram", "AAAA2222", NOW + 1) == "u1"
    assert await store.pairing.approve("telegram", "AAAA2222", NOW + 2) is None  # spent
    assert await store.pairing.is_paired("telegram", "u1")
    assert not await store.pairing.is_paired("discord", "u1")
    assert not await store.pairing.is_paired("telegram", "u2")
    assert await store.conversations.count("telegram:u1") == 0  # pairing makes no chat rows


async def test_many_strangers_at_once_each_keep_their_code(new_store: StoreFactory) -> None:
    store = new_store()
    await store.open()
    codes = await asyncio.gather(*(store.pairing.code_for("telegram", f"s{i}", f"CODE{i:04d}", NOW + 60, NOW)
                                   for i in range(10)))
    assert codes == [f"CODE{i:04d}" for i in range(10)]
    await store.close()
    store = new_store()
    await store.open()
    try:
        for i in range(10):
            assert await store.pairing.approve("telegram", f"CODE{i:04d}", NOW + 1) == f"s{i}"
        assert all([await store.pairing.is_paired("telegram", f"s{i}") for i in range(10)])
    finally:
        await store.close()


async def test_pending_codes_are_listed_and_a_denied_code_is_gone(store: Store) -> None:
    await store.pairing.code_for("telegram", "u1", "AAAA2222", NOW + 60, NOW)
    await store.pairing.code_for("discord", "u2", "DDDD5555", NOW + 30, NOW)
    await store.pairing.code_for("telegram", "u3", "EEEE6666", NOW + 5, NOW)
    pending = await store.pairing.pending(NOW + 10)  # u3's code has expired by then
    assert [(p.platform, p.user_id, p.code, p.expires_at) for p in pending] == [
        ("discord", "u2", "DDDD5555", NOW + 30), ("telegram", "u1", "AAAA2222", NOW + 60)]
    assert await store.pairing.deny("discord", "AAAA2222") is None  # telegram's code
    assert await store.pairing.deny("telegram", "AAAA2222") == "u1"
    assert await store.pairing.approve("telegram", "AAAA2222", NOW + 11) is None  # withdrawn
    assert [p.code for p in await store.pairing.pending(NOW + 10)] == ["DDDD5555"]
    assert not await store.pairing.is_paired("telegram", "u1")
