"""Typed chat settings: get/update per chat, reset with None, unknown names refused, durable."""

from __future__ import annotations

import asyncio

import pytest

from bot.store import ChatSettings, Store
from tests.store.conftest import StoreFactory


async def test_update_sets_resets_and_stays_in_its_chat(store: Store) -> None:
    assert await store.settings.get("tg:1") == ChatSettings()
    assert await store.settings.update("tg:1", language="zh") == ChatSettings(language="zh")
    assert await store.settings.update("tg:1", model="m1") == ChatSettings(language="zh", model="m1")
    assert await store.settings.get("tg:2") == ChatSettings()
    assert await store.settings.update("tg:1", model=None) == ChatSettings(language="zh")
    assert await store.settings.get("tg:1") == ChatSettings(language="zh")


async def test_an_unknown_setting_is_refused_and_changes_nothing(store: Store) -> None:
    await store.settings.update("tg:1", language="en")
    with pytest.raises(TypeError, match="colour"):
        await store.settings.update("tg:1", language="zh", colour="red")
    assert await store.settings.get("tg:1") == ChatSettings(language="en")


async def test_concurrent_updates_of_different_fields_both_land(store: Store) -> None:
    await asyncio.gather(*(store.settings.update(f"tg:{i % 3}", language=f"l{i}") for i in range(9)),
                         *(store.settings.update(f"tg:{i % 3}", model=f"m{i}") for i in range(9)))
    for chat in range(3):
        got = await store.settings.get(f"tg:{chat}")
        assert got.language is not None and got.model is not None
        assert int(got.language[1:]) % 3 == chat and int(got.model[1:]) % 3 == chat


async def test_settings_survive_reopen_and_do_not_touch_conversations(new_store: StoreFactory) -> None:
    first = new_store()
    await first.open()
    await first.settings.update("tg:1", language="zh", model="m1")
    assert await first.conversations.active("tg:1") is None
    await first.close()
    again = new_store()
    await again.open()
    try:
        assert await again.settings.get("tg:1") == ChatSettings(language="zh", model="m1")
        assert await again.conversations.count("tg:1") == 0
    finally:
        await again.close()
