"""Append-only schema migrations for PostgreSQL, run at start-up under an advisory lock so replicas
starting together never race; `bothub_schema.version` records how many have run.

Never edit a migration that has shipped: add a new one at the end instead. From ONLY_ADD on, migrations only
add (tables, columns, indexes, functions), so replicas of the previous release keep working against the new
schema during a rolling upgrade; a removal waits for a later release, once no replica calls the old thing. A
replica refuses to start against a schema newer than it knows.
"""

from __future__ import annotations

import asyncpg

from bot.store.postgres.append_sql import APPEND_FUNCTION, TRACE_IDS, derived
from bot.store.postgres.migrations_added import ADDED
from bot.store.postgres.schema_replicas import MIGRATIONS as REPLICA_MIGRATIONS
from bot.store.schema import SchemaTooNew

ONLY_ADD = 14  # every migration after the 14th only adds (tests/store/postgres check it)
MIGRATION_LOCK = 0x626F74687562  # "bothub": the advisory lock key every replica agrees on
MIGRATIONS: tuple[str, ...] = (
    # 1: the schema of SQLite migrations 1-3 in PostgreSQL's own types.
    """
    CREATE TABLE chats (
        key TEXT PRIMARY KEY,
        active_conversation TEXT,
        settings JSONB NOT NULL DEFAULT '{}',
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE conversations (
        id TEXT NOT NULL,
        chat TEXT NOT NULL,
        root_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL DEFAULT 'default',
        current_message_id TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (chat, id)
    );
    CREATE INDEX conversations_recent ON conversations (chat, updated_at DESC, seq DESC);
    CREATE TABLE messages (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        chat TEXT NOT NULL,
        parent_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls JSON,
        tool_call_id TEXT,
        author TEXT,
        interrupted BOOLEAN NOT NULL DEFAULT false,
        created_at TIMESTAMPTZ NOT NULL
    );
    CREATE UNIQUE INDEX messages_by_id ON messages (chat, conversation_id, id);
    CREATE INDEX messages_by_parent ON messages (chat, conversation_id, parent_id);
    CREATE TABLE seen_events (
        key TEXT PRIMARY KEY,
        expires_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX seen_events_expiry ON seen_events (expires_at);
    CREATE TABLE memories (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chat TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('fact', 'pref', 'decision', 'context', 'lesson')),
        tags TEXT[] NOT NULL DEFAULT '{}',
        content TEXT NOT NULL,
        uses INTEGER NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL,
        last_used_at TIMESTAMPTZ
    );
    CREATE INDEX memories_top ON memories (chat, uses DESC, id DESC);
    CREATE INDEX memories_by_chat ON memories (chat, id);
    CREATE TABLE pairing (
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        code TEXT,
        expires_at DOUBLE PRECISION,
        approved_at TIMESTAMPTZ,
        PRIMARY KEY (platform, user_id)
    );
    CREATE UNIQUE INDEX pairing_codes ON pairing (platform, code);
    CREATE TABLE jobs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation_id TEXT,
        created_by TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('once', 'cron', 'interval')),
        spec TEXT NOT NULL,
        timezone TEXT NOT NULL,
        next_due TIMESTAMPTZ,
        text TEXT NOT NULL,
        runs_agent BOOLEAN NOT NULL,
        enabled BOOLEAN NOT NULL DEFAULT true,
        last_run TIMESTAMPTZ,
        last_result TEXT,
        claimed_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX jobs_due ON jobs (next_due) WHERE enabled AND claimed_at IS NULL;
    CREATE INDEX jobs_by_chat ON jobs (chat, next_due);
    """,
    # 2: where a job's runs go, who made it, heartbeat jobs; messages remember the job that started their turn.
    """
    ALTER TABLE jobs ADD COLUMN platform TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN chat_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN thread_id TEXT;
    ALTER TABLE jobs ADD COLUMN is_group BOOLEAN NOT NULL DEFAULT false;
    ALTER TABLE jobs ADD COLUMN created_by_name TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN heartbeat BOOLEAN NOT NULL DEFAULT false;
    ALTER TABLE messages ADD COLUMN job_id TEXT;
    """,
    # 3: every message gets a fixed /goto number (SQLite migration 5): existing trees keep their depth-first
    # /tree order (children by creation), new messages continue from the highest.
    """
    ALTER TABLE messages ADD COLUMN number INTEGER;
    WITH RECURSIVE walk (seq, chat, conversation_id, id, path) AS (
        SELECT m.seq, m.chat, m.conversation_id, m.id, ARRAY[m.seq] FROM messages AS m JOIN conversations AS c
            ON c.chat = m.chat AND c.id = m.conversation_id AND m.parent_id = c.root_id
        UNION ALL
        SELECT m.seq, m.chat, m.conversation_id, m.id, walk.path || m.seq FROM messages AS m JOIN walk
            ON m.chat = walk.chat AND m.conversation_id = walk.conversation_id AND m.parent_id = walk.id
    )
    UPDATE messages SET number = ranked.n FROM (
        SELECT seq, row_number() OVER (PARTITION BY chat, conversation_id ORDER BY path) AS n FROM walk
    ) AS ranked WHERE messages.seq = ranked.seq;
    CREATE UNIQUE INDEX messages_by_number ON messages (chat, conversation_id, number);
    """,
    # 4: the durable inbox: accepted events not answered yet.
    """
    CREATE TABLE inbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session TEXT NOT NULL,
        event TEXT NOT NULL,
        accepted_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    """,
    # files that came with a message (bot/media): a JSON list of kind, MIME, size, SHA-256, path, name
    """
    ALTER TABLE messages ADD COLUMN files TEXT;
    """,
    # 6: the dashboard's audit log (search scans messages with strpos: no extension needed, CJK included).
    """
    CREATE TABLE audit_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    """,
    # 7: SQLite migration 9, summaries of a branch's oldest part on the node where the span ends.
    """
    CREATE TABLE summaries (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        content TEXT NOT NULL,
        covered INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id)
    );
    """,
    # 8: SQLite migration 10, group context: the newest un-addressed messages of each group chat or thread.
    """
    CREATE TABLE group_context (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chat TEXT NOT NULL,
        message_id TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        sender TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE UNIQUE INDEX group_context_by_chat ON group_context (chat, message_id);
    """,
    # 9: appending messages is one server-side call (one round trip): lock the conversation, number the
    # messages, check parents, insert with a fresh 8-hex id where a lone message's id is taken, move the
    # cursor, and let the inbox entry the batch answers go, all in one transaction. Each statement of a
    # PL/pgSQL function sees what committed before it, so the numbering read after the row lock is current.
    APPEND_FUNCTION,
    # 10: the platform ids of a reply's messages already sent, so a restart completes them by editing.
    """
    ALTER TABLE inbox ADD COLUMN replies TEXT[] NOT NULL DEFAULT '{}';
    """,
    # 11: SQLite migration 12, run traces numbered and capped per chat and pruned by age; each message names its run,
    # so bothub_append (migration 9) takes the messages' trace ids too.
    """
    CREATE TABLE traces (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        chat TEXT NOT NULL,
        conversation_id TEXT,
        started_at TIMESTAMPTZ NOT NULL,
        model TEXT NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        ttft_ms INTEGER,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        error_id TEXT,
        detail TEXT NOT NULL,
        n INTEGER NOT NULL
    );
    CREATE INDEX traces_by_chat ON traces (chat, n);
    CREATE INDEX traces_by_age ON traces (started_at);
    ALTER TABLE messages ADD COLUMN trace_id TEXT;
    DROP FUNCTION bothub_append(TEXT, TEXT, TEXT, TEXT, TIMESTAMPTZ, BIGINT, TEXT[], TEXT[], TEXT[], TEXT[], TEXT[],
                                TEXT[], TEXT[], BOOLEAN[], TIMESTAMPTZ[], TEXT[], INTEGER[], TEXT[]);
    """ + derived(APPEND_FUNCTION, TRACE_IDS),
    # 12: SQLite migration 13 (titles' source, archived, soft deletes), and trigram search for /search: pg_trgm
    # ships with PostgreSQL and is a trusted extension, so the database's owner may create it.
    """
    ALTER TABLE conversations ADD COLUMN title_source TEXT NOT NULL DEFAULT '';
    ALTER TABLE conversations ADD COLUMN archived BOOLEAN NOT NULL DEFAULT false;
    ALTER TABLE conversations ADD COLUMN deleted_at TIMESTAMPTZ;
    CREATE INDEX conversations_deleted ON conversations (deleted_at) WHERE deleted_at IS NOT NULL;
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX messages_trigrams ON messages USING gin (content gin_trgm_ops);
    """,
    # 13: SQLite migration 14, HTTP API tokens kept as a digest only.
    """
    CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        created_at TIMESTAMPTZ NOT NULL,
        revoked_at TIMESTAMPTZ
    );
    """,
    # 14: replicas: a chat's waiting entries by session, and every accepted entry wakes its chat's owner
    # (NOTIFY is delivered at commit, to every replica LISTENing; the payload is "<entry id> <session>").
    """
    CREATE INDEX inbox_by_session ON inbox (session, id);
    CREATE FUNCTION bothub_inbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('bothub_inbox', NEW.id || ' ' || NEW.session);
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER inbox_notify AFTER INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION bothub_inbox_notify();
    """,
    *ADDED,
    *REPLICA_MIGRATIONS,  # 23 and on: fencing, each chat's order; a new migration goes at the end of this last one
)


async def migrate(conn: asyncpg.Connection) -> int:
    """Run the migrations this database has not seen yet, all in one transaction; returns the new version."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await conn.execute("CREATE TABLE IF NOT EXISTS bothub_schema (version INTEGER NOT NULL)")
        version = await conn.fetchval("SELECT version FROM bothub_schema")
        if version is None:
            await conn.execute("INSERT INTO bothub_schema (version) VALUES (0)")
            version = 0
        if version > len(MIGRATIONS):
            raise SchemaTooNew(version, len(MIGRATIONS))
        for script in MIGRATIONS[version:]:
            await conn.execute(script)
        await conn.execute("UPDATE bothub_schema SET version = $1", len(MIGRATIONS))
    return len(MIGRATIONS)
