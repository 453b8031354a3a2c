"""SQLite search: FTS5 trigram snippets, quotes taken literally, and messages stored before the index existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot.store.sqlite import SqliteStore, migrations
from bot.store.sqlite.migrations import MIGRATIONS, migrate
from tests.web.seed import linear


async def test_search_words_all_must_match_and_quotes_are_literal(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3")
    await store.open()
    try:
        await linear(store, "t:1", ['say "hello world" twice', "hello there", "world peace"])
        found = await store.dashboard.search_messages("hello world")
        assert [h.snippet for h in found] == [(("say \"", False), ("hello", True), (" ", False), ("world", True),
                                              ("\" twice", False))]
        quoted = await store.dashboard.search_messages('"hello')
        assert [h.role for h in quoted] == ["user"]  # the quote is text, not syntax
        assert await store.dashboard.search_messages("   ") == []
        assert [h.chat for h in await store.dashboard.search_messages("peace", platform="t")] == ["t:1"]
        assert await store.dashboard.search_messages("peace", platform="x") == []
    finally:
        await store.close()


async def test_messages_stored_before_the_search_migration_are_found(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    before_search = next(i for i, step in enumerate(MIGRATIONS) if isinstance(step, str) and "messages_fts" in step)
    with monkeypatch.context() as older:  # a database made by the version before the search index
        older.setattr(migrations, "MIGRATIONS", MIGRATIONS[:before_search])
        migrate(db)
    db.execute("INSERT INTO conversations (id, chat, root_id, current_message_id, created_at, updated_at) "
               "VALUES ('c1', 't:1', 'r', 'r', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')")
    db.execute("INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, created_at, number) "
               "VALUES ('m1', 'c1', 't:1', 'r', 'user', '上海的天气预报', '2026-01-01T00:00:00+00:00', 1)")
    assert migrate(db) == len(MIGRATIONS)
    db.close()
    store = SqliteStore(path)
    await store.open()
    try:
        assert [h.message_id for h in await store.dashboard.search_messages("天气预报")] == ["m1"]
    finally:
        await store.close()
