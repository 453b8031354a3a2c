"""Migrations 23 and on (bot/store/postgres/migrations.py runs them after the others): fencing and each chat's
own order; then the tree's duels and votes (25), memory embeddings (26), linked chats (27), who wrote what in a
group (28), background tasks (29), the duels' agents and topic tags (30) dashboard accounts (31) and feedback on
answers (32). Add-only, like every migration after the 14th.

Fencing: a replica that takes a chat partition bumps the partition's epoch (bothub_partitions); every tree and
inbox write of a chat names the partition and the epoch its writer took it at, and bothub_fence checks that in
the same statement, under a share lock on the partition's row, so a write either lands before the next owner's
bump or fails (SQLSTATE BHF01) after it: a stale owner (frozen, cut off, a write delayed in the network) writes
nothing over its successor's work.

Order: each accepted entry gets the next number of its chat's own dense sequence (inbox_order, one row per chat,
locked by the accepting statement until it commits, so numbers follow commit order), and keeps the platform's
order key (IncomingMessage.order: an update's number, a time-ordered id, a creation time) where it gives one.
"""

from __future__ import annotations

from bot.store.postgres.append_sql import APPEND_FUNCTION, AUTHOR_IDS, TRACE_IDS, derived

FENCED = "BHF01"  # the SQLSTATE of a write refused by bothub_fence

MIGRATIONS: tuple[str, ...] = (
    # 23: fencing epochs per partition, and the fenced inbox writes.
    """
    CREATE TABLE bothub_partitions (
        p INTEGER PRIMARY KEY,
        epoch BIGINT NOT NULL,
        owner TEXT NOT NULL
    );
    CREATE FUNCTION bothub_fence(p_part INTEGER, p_epoch BIGINT) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
        IF p_part IS NULL THEN
            RETURN true;  -- a write outside ownership (a tool with no claims: migrate-store, import)
        END IF;
        PERFORM 1 FROM bothub_partitions AS f WHERE f.p = p_part AND f.epoch = p_epoch FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'partition % is no longer at epoch %: another replica owns it', p_part, p_epoch
                USING ERRCODE = 'BHF01';
        END IF;
        RETURN true;
    END
    $$;
    CREATE FUNCTION bothub_finish(p_ids BIGINT[], p_part INTEGER, p_epoch BIGINT) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM bothub_fence(p_part, p_epoch);
        DELETE FROM inbox AS e WHERE e.id = ANY (p_ids);
    END
    $$;
    CREATE FUNCTION bothub_replied(p_id BIGINT, p_replies TEXT[], p_part INTEGER, p_epoch BIGINT) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM bothub_fence(p_part, p_epoch);
        UPDATE inbox AS e SET replies = p_replies WHERE e.id = p_id;
    END
    $$;
    """,
    # 24: each chat's own dense sequence of accepted entries, and the platform's order key.
    """
    CREATE TABLE inbox_order (
        session TEXT PRIMARY KEY,
        last BIGINT NOT NULL
    );
    ALTER TABLE inbox ADD COLUMN seq BIGINT;
    ALTER TABLE inbox ADD COLUMN platform_order BIGINT;
    """,
    # 25: duels (/duel): which sibling answers competed and which model wrote each; votes (/vote): whom each
    # voter chose in a duel (one row per voter, replaced by a new vote)
    """
    CREATE TABLE duels (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        duel TEXT NOT NULL,
        message_id TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id)
    );
    CREATE INDEX duels_by_duel ON duels (chat, duel);
    CREATE TABLE votes (
        chat TEXT NOT NULL,
        duel TEXT NOT NULL,
        voter TEXT NOT NULL,
        message_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (chat, duel, voter)
    );
    """,
    # 26: each memory's embedding and its short sketch (issue 35), unit length: ranking is a dot product
    "ALTER TABLE memories ADD COLUMN embedding REAL[], ADD COLUMN sketch REAL[];",
    # 27: linked chats (issue 36): a hand-off code that links (`/handoff link`), and each chat that shares another
    # chat's history (a person's DMs on two platforms)
    """
    ALTER TABLE handoffs ADD COLUMN link BOOLEAN NOT NULL DEFAULT false;
    CREATE TABLE chat_links (
        alias TEXT PRIMARY KEY,
        home TEXT NOT NULL,
        linked_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX chat_links_by_home ON chat_links (home);
    """,
    # 28: who wrote each message and overheard line in a group (issue 36: a member's /forget_me erases their own);
    # bothub_append gains the column as an overload, so a replica of the previous release keeps calling its own
    """
    ALTER TABLE messages ADD COLUMN author_id TEXT;
    ALTER TABLE group_context ADD COLUMN sender_id TEXT;
    """ + derived(APPEND_FUNCTION, TRACE_IDS, AUTHOR_IDS),
    # 29: background tasks (sub-agents, bot/store/tasks.py); each one's run waits in its chat's inbox
    """
    CREATE TABLE tasks (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
        created_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ
    );
    CREATE INDEX tasks_by_chat ON tasks (chat, state);
    """,
    # 30: each duel's answering agent, topic tag (bot/agent/topics.py) and each answer's place in it, for win rates
    # per agent and per tag and for drawing the duel again in columns
    """
    ALTER TABLE duels ADD COLUMN agent TEXT NOT NULL DEFAULT '',
                      ADD COLUMN topic TEXT NOT NULL DEFAULT '',
                      ADD COLUMN place INTEGER NOT NULL DEFAULT 0;
    """,
    # 31: dashboard accounts with roles (issue 30): owner, admin of some agents, viewer; a password's scrypt hash
    """
    CREATE TABLE dashboard_accounts (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        agents TEXT[] NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
    );
    """,
    # 32: feedback on answers (the 👍/👎 under an answer): one rating per person per answer, replaced by the next
    """
    CREATE TABLE feedback (
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        person TEXT NOT NULL,
        good BOOLEAN NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (chat, conversation_id, message_id, person)
    );
    """,
)
