"""SQLite migrations from the 15th on (bot/store/sqlite/migrations.py runs them after the first 14): append new
ones at the end; never edit one that has shipped. Kept apart so each file stays readable.
"""

from __future__ import annotations

ADDED: tuple[str, ...] = (
    # 15: usage totals per UTC day, chat, user and model (bot/store/usage.py); chat '' is everyone's per day.
    """
    CREATE TABLE usage (
        day TEXT NOT NULL,
        chat TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cached_tokens INTEGER NOT NULL,
        cost REAL NOT NULL,
        PRIMARY KEY (chat, day, user_id, model)
    ) WITHOUT ROWID;
    CREATE INDEX usage_by_user ON usage (user_id, day);
    CREATE INDEX usage_by_day ON usage (day);
    """,
    # 16: a scheduled job's run is an inbox entry (bot/store/jobs.py); the job stays claimed while it waits.
    """
    ALTER TABLE inbox ADD COLUMN job INTEGER;
    CREATE INDEX inbox_by_job ON inbox (job) WHERE job IS NOT NULL;
    """,
    # 17: standing approvals (issue 28 §7): the exact command text an admin chose to allow always
    """
    CREATE TABLE approval_rules (
        id INTEGER PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation TEXT,
        kind TEXT NOT NULL,
        command TEXT NOT NULL,
        granted_by TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX approval_rules_by_chat ON approval_rules (chat, kind, command);
    """,
    # 18: hand-off codes (/handoff, /resume): one-time, expiring, spent by one DELETE … RETURNING
    """
    CREATE TABLE handoffs (
        code TEXT PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        move INTEGER NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # 19: quotas (issue 31): what each user, chat and agent used and reserved of a cap this day or month
    """
    CREATE TABLE quotas (
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        period TEXT NOT NULL,
        start TEXT NOT NULL,
        used REAL NOT NULL,
        quota REAL NOT NULL,
        reservations INTEGER NOT NULL,
        warned INTEGER NOT NULL,
        PRIMARY KEY (scope, subject, period, start)
    );
    """,
    # 20: agents, identities and bindings (bot/store/fleet.py), their history, and the bot account a job posts through
    """
    CREATE TABLE fleet (
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        spec TEXT NOT NULL,
        sealed TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (kind, name)
    );
    CREATE TABLE fleet_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        action TEXT NOT NULL,
        spec TEXT NOT NULL,
        credentials INTEGER NOT NULL DEFAULT 0
    );
    ALTER TABLE jobs ADD COLUMN identity TEXT NOT NULL DEFAULT '';
    """,
    # 21: each chat's own dense sequence of accepted entries, and the platform's order key (bot/store/inbox.py).
    """
    CREATE TABLE inbox_order (
        session TEXT PRIMARY KEY,
        last INTEGER NOT NULL
    );
    ALTER TABLE inbox ADD COLUMN seq INTEGER;
    ALTER TABLE inbox ADD COLUMN platform_order INTEGER;
    """,
    # 22: duels (/duel): which sibling answers competed and which model wrote each; votes (/vote): whom each
    # voter chose in a duel (one row per voter, replaced by a new vote)
    """
    CREATE TABLE duels (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        duel TEXT NOT NULL,
        message_id TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id)
    );
    CREATE INDEX duels_by_duel ON duels (chat, duel);
    CREATE TABLE votes (
        chat TEXT NOT NULL,
        duel TEXT NOT NULL,
        voter TEXT NOT NULL,
        message_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (chat, duel, voter)
    );
    """,
    # 23: each memory's embedding and its short sketch (issue 35): unit-length float32, the layout sqlite-vec reads
    "ALTER TABLE memories ADD COLUMN embedding BLOB; ALTER TABLE memories ADD COLUMN sketch BLOB;",
    # 24: linked chats (issue 36): a hand-off code that links (`/handoff link`), and each chat that shares another
    # chat's history (a person's DMs on two platforms)
    """
    ALTER TABLE handoffs ADD COLUMN link INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE chat_links (
        alias TEXT PRIMARY KEY,
        home TEXT NOT NULL,
        linked_at REAL NOT NULL
    );
    CREATE INDEX chat_links_by_home ON chat_links (home);
    """,
    # 25: who wrote each message and overheard line in a group (issue 36: a member's /forget_me erases their own),
    # and the search index kept right when a message's text is erased in place
    """
    ALTER TABLE messages ADD COLUMN author_id TEXT;
    ALTER TABLE group_context ADD COLUMN sender_id TEXT;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
        INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
    END;
    """,
    # 26: background tasks (sub-agents, bot/store/tasks.py); each one's run waits in its chat's inbox (keyed by the
    # task's id, so ids are never reused)
    """
    CREATE TABLE tasks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        parent_id TEXT NOT NULL,
        prompt TEXT NOT NULL,
        role TEXT NOT NULL,
        model TEXT NOT NULL,
        tools TEXT,
        where_ref TEXT NOT NULL,
        user_id TEXT NOT NULL,
        user_name TEXT NOT NULL,
        lang TEXT NOT NULL,
        state TEXT NOT NULL,
        result TEXT NOT NULL DEFAULT '',
        branch_id TEXT NOT NULL DEFAULT '',
        progress_id TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE INDEX tasks_by_chat ON tasks (chat, state);
    """,
    # 27: each duel's answering agent, topic tag (bot/agent/topics.py) and each answer's place in it, for win rates
    # per agent and per tag and for drawing the duel again in columns
    """
    ALTER TABLE duels ADD COLUMN agent TEXT NOT NULL DEFAULT '';
    ALTER TABLE duels ADD COLUMN topic TEXT NOT NULL DEFAULT '';
    ALTER TABLE duels ADD COLUMN place INTEGER NOT NULL DEFAULT 0;
    """,
    # 28: dashboard accounts with roles (issue 30): owner, admin of some agents, viewer; a password's scrypt hash
    """
    CREATE TABLE dashboard_accounts (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        agents TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    """,
    # 29: feedback on answers (the 👍/👎 under an answer): one rating per person per answer, replaced by the next
    """
    CREATE TABLE feedback (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        person TEXT NOT NULL,
        good INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id, person)
    );
    """,
)
