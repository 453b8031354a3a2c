"""PostgreSQL migrations from the 15th on: each only adds (tables, columns, indexes, functions), so replicas of
the previous release keep working during a rolling upgrade (bot/store/postgres/migrations.py runs them; a test
checks that nothing here drops or alters away). Closed at 22: new ones go at the end of schema_replicas.py, the
last tuple migrations.py runs; never edit one that has shipped.
"""

from __future__ import annotations

ADDED: tuple[str, ...] = (
    # 15: usage totals per UTC day, chat, user and model (bot/store/usage.py); chat '' is everyone's per day.
    """
    CREATE TABLE usage (
        day DATE NOT NULL,
        chat TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        requests BIGINT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        cached_tokens BIGINT NOT NULL,
        cost DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (chat, day, user_id, model)
    );
    CREATE INDEX usage_by_user ON usage (user_id, day);
    CREATE INDEX usage_by_day ON usage (day);
    """,
    # 16: a scheduled job's run is an inbox entry (bot/store/jobs.py), taken over like any message when its
    # replica dies; the job stays claimed while the entry waits.
    """
    ALTER TABLE inbox ADD COLUMN job BIGINT;
    CREATE INDEX inbox_by_job ON inbox (job) WHERE job IS NOT NULL;
    """,
    # 17: each replica's heartbeat, written from its event loop; a silent one's claims connection is ended by
    # its peers (bot/store/postgres/claims.py).
    """
    CREATE TABLE bothub_replicas (
        id TEXT PRIMARY KEY,
        backend INTEGER NOT NULL,
        beat TIMESTAMPTZ NOT NULL
    );
    """,
    # 18: standing approvals (issue 28 §7): the exact command text an admin chose to allow always
    """
    CREATE TABLE approval_rules (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation TEXT,
        kind TEXT NOT NULL,
        command TEXT NOT NULL,
        granted_by TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
    );
    CREATE INDEX approval_rules_by_chat ON approval_rules (chat, kind, command);
    """,
    # 19: hand-off codes (/handoff, /resume): one-time, expiring, spent by one DELETE … RETURNING
    """
    CREATE TABLE handoffs (
        code TEXT PRIMARY KEY,
        chat TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        move BOOLEAN NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    );
    """,
    # 20: replies reach the replica that waits for them (bot/store/postgres/relay.py): an event too big for a
    # NOTIFY waits in relay_events, and each finished inbox entry tells whoever waits on its chat.
    """
    CREATE TABLE relay_events (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL,
                               created_at TIMESTAMPTZ NOT NULL DEFAULT now());
    CREATE FUNCTION bothub_inbox_done() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('bothub_relay', to_json('done:' || OLD.session)::text || E'\n\n'); RETURN NULL; END $$;
    CREATE TRIGGER inbox_done AFTER DELETE ON inbox FOR EACH ROW EXECUTE FUNCTION bothub_inbox_done();
    """,
    # 21: quotas (issue 31): what each user, chat and agent used and reserved of a cap this day or month; a
    # reservation is one conditional upsert on these rows, exact across replicas (bot/store/quotas.py)
    """
    CREATE TABLE quotas (
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        period TEXT NOT NULL,
        start TEXT NOT NULL,
        used DOUBLE PRECISION NOT NULL,
        quota DOUBLE PRECISION NOT NULL,
        reservations BIGINT NOT NULL,
        warned BIGINT NOT NULL,
        PRIMARY KEY (scope, subject, period, start)
    );
    """,
    # 22: agents, identities and bindings (bot/store/fleet.py), their history, and the bot account a job posts through
    """
    CREATE TABLE fleet (
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        spec TEXT NOT NULL,
        sealed TEXT,
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (kind, name)
    );
    CREATE TABLE fleet_changes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        action TEXT NOT NULL,
        spec TEXT NOT NULL,
        credentials BOOLEAN NOT NULL DEFAULT false
    );
    ALTER TABLE jobs ADD COLUMN identity TEXT NOT NULL DEFAULT '';
    """,
)
