"""Append-only schema migrations; `PRAGMA user_version` records how many have run.

Never edit a migration that has shipped: add a new one at the end of migrations_added.py. A migration is an SQL script,
or a function for what SQL says badly (a depth-first walk); each runs in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from bot.store.schema import SchemaTooNew
from bot.store.sqlite.migrations_added import ADDED


def _number_messages(db: sqlite3.Connection) -> None:
    """5: every message gets a fixed `/goto` number. Existing trees keep the numbers /tree showed until now
    (depth first, children in creation order, the root 0); new messages continue from the highest."""
    db.execute("ALTER TABLE messages ADD COLUMN number INTEGER")
    for chat, conv_id, root_id in db.execute("SELECT chat, id, root_id FROM conversations").fetchall():
        children: dict[str, list[str]] = {}
        rows = db.execute("SELECT id, parent_id FROM messages WHERE chat = ? AND conversation_id = ? ORDER BY seq",
                          (chat, conv_id))
        for mid, parent in rows:
            children.setdefault(parent, []).append(mid)
        order, stack = [], list(reversed(children.get(root_id, [])))
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(children.get(node, [])))
        db.executemany("UPDATE messages SET number = ? WHERE chat = ? AND conversation_id = ? AND id = ?",
                       [(n, chat, conv_id, mid) for n, mid in enumerate(order, start=1)])
    db.execute("CREATE UNIQUE INDEX messages_by_number ON messages (chat, conversation_id, number)")


MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    # 1: chats, conversations, the message tree, persisted dedupe keys.
    """
    CREATE TABLE chats (
        key TEXT PRIMARY KEY,
        active_conversation TEXT,
        settings TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    );
    CREATE TABLE conversations (
        id TEXT NOT NULL,
        chat TEXT NOT NULL,
        root_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL DEFAULT 'default',
        current_message_id TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (chat, id)
    );
    CREATE INDEX conversations_recent ON conversations (chat, updated_at);
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        chat TEXT NOT NULL,
        parent_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        author TEXT,
        interrupted INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX messages_by_id ON messages (chat, conversation_id, id);
    CREATE INDEX messages_by_parent ON messages (chat, conversation_id, parent_id);
    CREATE TABLE seen_events (
        key TEXT PRIMARY KEY,
        expires_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX seen_events_expiry ON seen_events (expires_at);
    """,
    # 2: per-chat long-term memory (seed 003 §4); tags is a JSON list of strings.
    """
    CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        chat TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('fact', 'pref', 'decision', 'context', 'lesson')),
        tags TEXT NOT NULL DEFAULT '[]',
        content TEXT NOT NULL,
        uses INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        last_used_at TEXT
    );
    CREATE INDEX memories_top ON memories (chat, uses DESC, id DESC);
    CREATE INDEX memories_by_chat ON memories (chat, id);
    """,
    # 3: pairing gets its own table (it lived in fake '_pairing:<platform>' chat rows); scheduled jobs.
    r"""
    CREATE TABLE pairing (
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        code TEXT,
        expires_at REAL,
        approved_at TEXT,
        PRIMARY KEY (platform, user_id)
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX pairing_codes ON pairing (platform, code);
    INSERT INTO pairing (platform, user_id, approved_at)
        SELECT substr(c.key, 10), a.value, c.created_at FROM chats AS c, json_each(c.settings, '$.approved') AS a
        WHERE c.key LIKE '\_pairing:%' ESCAPE '\';
    INSERT INTO pairing (platform, user_id, code, expires_at)
        SELECT substr(c.key, 10), json_extract(p.value, '$.user_id'), p.key, json_extract(p.value, '$.expires')
        FROM chats AS c, json_each(c.settings, '$.pending') AS p
        WHERE c.key LIKE '\_pairing:%' ESCAPE '\'
        ON CONFLICT DO NOTHING;
    DELETE FROM chats WHERE key LIKE '\_pairing:%' ESCAPE '\';
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation_id TEXT,
        created_by TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('once', 'cron', 'interval')),
        spec TEXT NOT NULL,
        timezone TEXT NOT NULL,
        next_due TEXT,
        text TEXT NOT NULL,
        runs_agent INTEGER NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        last_run TEXT,
        last_result TEXT,
        claimed_at TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX jobs_due ON jobs (next_due) WHERE enabled = 1 AND claimed_at IS NULL;
    CREATE INDEX jobs_by_chat ON jobs (chat, next_due);
    """,
    # 4: where a job's runs go, who made it, heartbeat jobs; messages remember the job that started their turn.
    """
    ALTER TABLE jobs ADD COLUMN platform TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN chat_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN thread_id TEXT;
    ALTER TABLE jobs ADD COLUMN is_group INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN created_by_name TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN heartbeat INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE messages ADD COLUMN job_id TEXT;
    """,
    _number_messages,  # 5
    # 6: the durable inbox: accepted events not answered yet.
    """
    CREATE TABLE inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session TEXT NOT NULL,
        event TEXT NOT NULL,
        accepted_at TEXT NOT NULL
    );
    """,
    # files that came with a message (bot/media): a JSON list of kind, MIME, size, SHA-256, path, name
    """
    ALTER TABLE messages ADD COLUMN files TEXT;
    """,
    # 8: full-text search over messages (trigram, so CJK is searchable) and the dashboard's audit log.
    """
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content='messages', content_rowid='seq', tokenize='trigram'
    );
    INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    END;
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    """,
    # 9: summaries of a branch's oldest part, on the node where the summarized span ends.
    """
    CREATE TABLE summaries (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        content TEXT NOT NULL,
        covered INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id)
    );
    """,
    # 10: group context, the newest un-addressed messages of each group chat or thread (a ring per chat).
    """
    CREATE TABLE group_context (
        id INTEGER PRIMARY KEY,
        chat TEXT NOT NULL,
        message_id TEXT NOT NULL,
        at REAL NOT NULL,
        sender TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE UNIQUE INDEX group_context_by_chat ON group_context (chat, message_id);
    """,
    # 11: the platform ids of a reply's messages already sent (a JSON list), so a restart completes them by editing.
    """
    ALTER TABLE inbox ADD COLUMN replies TEXT NOT NULL DEFAULT '[]';
    """,
    # 12: run traces (bot/store/traces.py), numbered and capped per chat and pruned by age; each message names its run.
    """
    CREATE TABLE traces (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        chat TEXT NOT NULL,
        conversation_id TEXT,
        started_at TEXT NOT NULL,
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
    """,
    # 13: housekeeping: where a title came from ('' the first message, 'auto' generated, 'user' /rename),
    # archived conversations, soft deletes waiting for their purge.
    """
    ALTER TABLE conversations ADD COLUMN title_source TEXT NOT NULL DEFAULT '';
    ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN deleted_at TEXT;
    CREATE INDEX conversations_deleted ON conversations (deleted_at) WHERE deleted_at IS NOT NULL;
    """,
    # 14: HTTP API tokens, kept as a digest only.
    """
    CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    """,
    *ADDED,  # 15 and on; a new migration goes at the end of bot/store/sqlite/migrations_added.py
)


def migrate(db: sqlite3.Connection) -> int:
    """Run the migrations this database has not seen yet, each atomically; returns the new version."""
    row = db.execute("PRAGMA user_version").fetchone()
    version = int(row[0]) if row else 0
    if version > len(MIGRATIONS):
        raise SchemaTooNew(version, len(MIGRATIONS))
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        try:
            if isinstance(step, str):
                db.executescript(f"BEGIN;\n{step}\nPRAGMA user_version = {number};\nCOMMIT;")
            else:
                db.execute("BEGIN")
                step(db)
                db.execute(f"PRAGMA user_version = {number}")
                db.execute("COMMIT")
        except BaseException:
            db.rollback()
            raise
    return len(MIGRATIONS)
