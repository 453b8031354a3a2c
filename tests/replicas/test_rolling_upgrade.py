"""Rolling upgrades: a replica of an older release refuses to start against a schema a newer one migrated, with
one clear line that names both versions (en and zh), on PostgreSQL and on SQLite."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import asyncpg
import pytest

from bot.store.postgres import PostgresStore
from bot.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from bot.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests.cli.test_cli_forgives import clean_env
from tests.fakes.openai_api import FakeOpenAI
from tests.postgres import PostgresServer

LINES = {
    "en": "the database's schema is version {found}, newer than this bothub knows ({known})",
    "zh": "数据库的结构版本是 {found}，比这个 bothub 认识的版本（{known}）更新",
}


async def _run(tmp_path: Path, llm: FakeOpenAI, lang: str, **env: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", cwd=tmp_path, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=clean_env(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="sk-test", BOTHUB_PORT="0",
                      BOTHUB_LANGUAGE=lang, BOTHUB_DATA_DIR=str(tmp_path / "data"), **env))
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, err.decode()


def _refused(code: int, err: str, lang: str, found: int, known: int) -> None:
    assert code == 2, err
    assert "Traceback" not in err, err
    said = [line for line in err.splitlines() if line.startswith(("bothub:", "bothub："))]  # not the log lines
    assert len(said) == 1 and LINES[lang].format(found=found, known=known) in said[0], err


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_an_older_replica_refuses_a_newer_postgres_schema(tmp_path: Path, fake: FakeOpenAI,
                                                                postgres: PostgresServer, lang: str) -> None:
    url = await postgres.new_database()
    store = PostgresStore(url)
    await store.open()
    await store.close()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("UPDATE bothub_schema SET version = version + 1")  # what the next release migrated
    finally:
        await conn.close()
    code, err = await _run(tmp_path, fake, lang, BOTHUB_DATABASE_URL=url)
    _refused(code, err, lang, len(PG_MIGRATIONS) + 1, len(PG_MIGRATIONS))


async def test_an_older_bothub_refuses_a_newer_sqlite_schema(tmp_path: Path, fake: FakeOpenAI) -> None:
    (tmp_path / "data").mkdir()
    with sqlite3.connect(tmp_path / "data" / "bothub.sqlite3") as db:
        db.execute(f"PRAGMA user_version = {len(SQLITE_MIGRATIONS) + 3}")
    code, err = await _run(tmp_path, fake, "en")
    _refused(code, err, "en", len(SQLITE_MIGRATIONS) + 3, len(SQLITE_MIGRATIONS))
