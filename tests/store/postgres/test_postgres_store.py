"""What only the PostgreSQL backend promises: replicas starting together migrate once, the URL picks it,
and the whole app runs on it (restart included)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import asyncpg
import pytest

from bot.chats.sessions import SessionKey
from bot.config import ConfigError, load_config
from bot.store import ChatSettings
from bot.store.backends import store_for_url
from bot.store.postgres import PostgresStore
from bot.store.postgres.migrations import MIGRATIONS, ONLY_ADD
from bot.store.sqlite import SqliteStore
from bot.tree.model import Message
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer


async def test_replicas_starting_together_migrate_once(postgres: PostgresServer) -> None:
    url = await postgres.new_database()
    stores = [PostgresStore(url, pool_size=2) for _ in range(4)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        await asyncio.gather(*(s.settings.update("tg:1", language="zh") for s in stores))
        assert await stores[3].settings.get("tg:1") == ChatSettings(language="zh")
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetch("SELECT version FROM bothub_schema") == [(len(MIGRATIONS),)]
        await conn.execute("UPDATE bothub_schema SET version = version + 1")
    finally:
        await conn.close()
    newer = PostgresStore(url)
    with pytest.raises(RuntimeError, match="newer than this program"):
        await newer.open()


def test_migrations_for_rolling_upgrades_only_add() -> None:
    """A replica of the previous release keeps running against the new schema while the next one starts."""
    removing = re.compile(r"\b(DROP|RENAME|ALTER\s+COLUMN|TRUNCATE|DELETE\s+FROM|CREATE\s+OR\s+REPLACE)\b", re.I)
    assert removing.search(MIGRATIONS[10])  # migration 11 dropped a function the release before it called
    assert len(MIGRATIONS) > ONLY_ADD
    for number, script in enumerate(MIGRATIONS[ONLY_ADD:], start=ONLY_ADD + 1):
        outside_bodies = re.sub(r"\$\$.*?\$\$", "", script, flags=re.S)  # a function's body may delete rows
        assert not removing.search(outside_bodies), f"migration {number} removes or changes: {script}"


def test_the_url_picks_the_backend(tmp_path: Path) -> None:
    assert isinstance(store_for_url(f"sqlite:///{tmp_path}/x.sqlite3"), SqliteStore)
    assert isinstance(store_for_url("postgresql://bothub@127.0.0.1/db"), PostgresStore)
    with pytest.raises(ValueError, match="sqlite:/// or postgresql://") as caught:
        store_for_url("mysql://user:hunter22@host/db")
    assert "hunter22" not in str(caught.value)
    default = load_config(env={"BOTHUB_DATA_DIR": str(tmp_path)})
    assert default.database_url == f"sqlite:///{tmp_path}/bothub.sqlite3"
    chosen = load_config(env={"BOTHUB_DATABASE_URL": "postgresql://u@h/db"})
    assert chosen.database_url == "postgresql://u@h/db" and "postgresql" not in repr(chosen)
    with pytest.raises(ConfigError, match="BOTHUB_DATABASE_URL"):
        load_config(env={"BOTHUB_DATABASE_URL": "mysql://u@h/db"})


async def test_the_app_answers_and_remembers_on_postgres(tmp_path: Path, fake: FakeOpenAI,
                                                         postgres: PostgresServer) -> None:
    env = {"BOTHUB_DATABASE_URL": await postgres.new_database()}
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), env=env) as app:
        await rec.say("hello bot", message_id="m1")
        await rec.say("/lang zh")
        await wait_for(lambda: len(rec.texts()) == 2)
        await app.hub.idle()
    assert not (tmp_path / "data" / "bothub.sqlite3").exists()
    rec2 = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec2,), env=env) as app:
        await rec2.say("hello bot", message_id="m1")  # redelivered after a restart: answered once
        await rec2.say("again", message_id="m2")
        await wait_for(lambda: len(rec2.texts()) == 1)
        await app.hub.idle()
        key = SessionKey("recording", "c1").storage_key
        opened = await app.store.conversations.open_chat(key)
    assert rec2.texts() == ["again"]
    assert opened.settings == ChatSettings(language="zh")
    assert [m.content for m in opened.path] == ["hello bot", "hello bot", "again", "again"]


async def test_existing_trees_are_numbered_as_tree_showed_them(postgres: PostgresServer) -> None:
    """Migration 3: old trees keep their depth-first /tree numbers; new messages continue after them."""
    url = await postgres.new_database()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(MIGRATIONS[0])
        await conn.execute("CREATE TABLE bothub_schema (version INTEGER NOT NULL); "
                           "INSERT INTO bothub_schema VALUES (1)")
        await conn.execute("INSERT INTO conversations (id, chat, root_id, current_message_id, created_at, updated_at, "
                           "message_count) VALUES ('c1', 'tg:1', 'r', 'm5', now(), now(), 5)")
        for mid, parent in [("m1", "r"), ("m2", "m1"), ("m4", "m1"), ("m3", "m2"), ("m5", "m4")]:
            await conn.execute("INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, created_at) "
                               "VALUES ($1, 'c1', 'tg:1', $2, 'user', $1, now())", mid, parent)
    finally:
        await conn.close()
    store = PostgresStore(url)
    await store.open()
    try:
        conv = await store.conversations.load("tg:1", "c1", "p")
        assert conv is not None
        assert {n: conv.messages[mid].content for n, mid in conv.numbered.items() if n} == {
            1: "m1", 2: "m2", 3: "m3", 4: "m4", 5: "m5"}
        new = Message.new("assistant", "after", parent_id="m5")
        await store.conversations.append("tg:1", "c1", [new])
        assert new.number == 6
    finally:
        await store.close()
