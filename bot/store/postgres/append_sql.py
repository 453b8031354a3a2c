"""The text of `bothub_append`, the one-round-trip append of messages (migration 9), and the changes later
migrations make to it: each recreates the function from this text, so no migration copies it."""

from __future__ import annotations

# Migration 9's function; migration 11 recreates it with one more column (its text derived, not copied).
APPEND_FUNCTION = """
    CREATE FUNCTION bothub_append(
        p_chat TEXT, p_conv TEXT, p_cursor TEXT, p_title TEXT, p_now TIMESTAMPTZ, p_finish BIGINT,
        p_ids TEXT[], p_parents TEXT[], p_roles TEXT[], p_contents TEXT[], p_tool_calls TEXT[],
        p_tool_call_ids TEXT[], p_authors TEXT[], p_interrupted BOOLEAN[], p_created TIMESTAMPTZ[],
        p_job_ids TEXT[], p_numbers INTEGER[], p_files TEXT[]
    ) RETURNS TABLE (message_id TEXT, message_number INTEGER) LANGUAGE plpgsql AS $$
    DECLARE
        v_root TEXT;
        v_parent_default TEXT;
        v_cursor TEXT;
        v_last INTEGER;
        v_known TEXT[];
        v_parent TEXT;
        v_id TEXT;
        v_number INTEGER;
        v_count INTEGER := coalesce(array_length(p_ids, 1), 0);
    BEGIN
        SELECT c.root_id, c.current_message_id INTO v_root, v_parent_default FROM conversations AS c
            WHERE c.chat = p_chat AND c.id = p_conv FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no conversation % in this chat', p_conv USING ERRCODE = 'no_data_found';
        END IF;
        SELECT coalesce(max(m.number), 0) INTO v_last FROM messages AS m
            WHERE m.chat = p_chat AND m.conversation_id = p_conv;
        v_known := ARRAY[v_root, v_parent_default];
        v_cursor := coalesce(p_cursor, p_ids[v_count]);
        FOR i IN 1 .. v_count LOOP
            v_number := p_numbers[i];
            IF v_number IS NULL THEN
                v_last := v_last + 1;
                v_number := v_last;
            END IF;
            v_parent := coalesce(p_parents[i], v_parent_default);
            IF NOT v_parent = ANY (v_known) AND NOT EXISTS (SELECT 1 FROM messages AS m
                    WHERE m.chat = p_chat AND m.conversation_id = p_conv AND m.id = v_parent) THEN
                RAISE EXCEPTION 'message %: unknown parent %', p_ids[i], v_parent
                    USING ERRCODE = 'foreign_key_violation';
            END IF;
            v_id := p_ids[i];
            FOR attempt IN 1 .. 5 LOOP
                INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, tool_calls, tool_call_id,
                                      author, interrupted, created_at, job_id, number, files)
                    VALUES (v_id, p_conv, p_chat, v_parent, p_roles[i], p_contents[i], p_tool_calls[i]::json,
                            p_tool_call_ids[i], p_authors[i], p_interrupted[i], p_created[i], p_job_ids[i], v_number,
                            p_files[i])
                    ON CONFLICT (chat, conversation_id, id) DO NOTHING;
                EXIT WHEN FOUND;
                IF v_count > 1 OR attempt = 5 THEN
                    RAISE EXCEPTION 'duplicate message id %', v_id USING ERRCODE = 'unique_violation';
                END IF;
                v_id := lpad(to_hex(floor(random() * 4294967296)::BIGINT), 8, '0');  -- a lone message: no children yet
                v_cursor := v_id;
            END LOOP;
            v_known := v_known || v_id;
            v_parent_default := v_id;
            message_id := v_id;
            message_number := v_number;
            RETURN NEXT;
        END LOOP;
        UPDATE conversations AS c SET current_message_id = v_cursor, message_count = c.message_count + v_count,
            updated_at = p_now, title = CASE WHEN c.title = '' THEN p_title ELSE c.title END
            WHERE c.chat = p_chat AND c.id = p_conv;
        DELETE FROM inbox AS e WHERE e.id = p_finish;
    END
    $$;
"""
TRACE_IDS = (  # (migration 9's text, migration 11's): the parameter, the column, the value
    ("p_numbers INTEGER[], p_files TEXT[]\n", "p_numbers INTEGER[], p_files TEXT[], p_trace_ids TEXT[]\n"),
    ("job_id, number, files)\n", "job_id, number, files, trace_id)\n"),
    ("p_files[i])\n", "p_files[i], p_trace_ids[i])\n"),
)

AUTHOR_IDS = (  # (migration 11's text, migration 28's): the sender's id on its platform, in groups
    ("p_files TEXT[], p_trace_ids TEXT[]\n", "p_files TEXT[], p_trace_ids TEXT[], p_author_ids TEXT[]\n"),
    ("job_id, number, files, trace_id)\n", "job_id, number, files, trace_id, author_id)\n"),
    ("p_files[i], p_trace_ids[i])\n", "p_files[i], p_trace_ids[i], p_author_ids[i])\n"),
)


def derived(function: str, *changes: tuple[tuple[str, str], ...]) -> str:
    """The function's text with each change made (each old text must occur exactly once)."""
    for old, new in (change for group in changes for change in group):
        if function.count(old) != 1:
            raise RuntimeError(f"bothub_append: {old!r} not found once")
        function = function.replace(old, new)
    return function
