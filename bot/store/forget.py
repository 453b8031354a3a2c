"""Forgetting on request: every row a chat (or a person) left, erased on both backends, counted per kind.

The tables are named here, each with the column that says whose a row is, and every other table is named in
KEEP with why it stays — a test lists the database's tables and fails on one in neither, so a new table must
say whether it holds someone's data. Messages go with their search index (SQLite's FTS triggers, PostgreSQL's
GIN index follows its table). Usage rows of the everyone-per-day total (chat '') keep the numbers, not who.
"""

from __future__ import annotations

from typing import Protocol

# (table, the column holding the chat's storage key), children before parents
BY_CHAT: tuple[tuple[str, str], ...] = (
    ("messages", "chat"), ("summaries", "chat"), ("conversations", "chat"), ("memories", "chat"),
    ("group_context", "chat"), ("traces", "chat"), ("jobs", "chat"), ("approval_rules", "chat"),
    ("handoffs", "chat"), ("feedback", "chat"), ("votes", "chat"), ("duels", "chat"), ("chat_links", "alias"),
    ("chat_links", "home"), ("tasks", "chat"),
    ("usage", "chat"), ("quotas", "subject"), ("inbox", "session"), ("inbox_order", "session"),
    ("chats", "key"),
)
# (table, the column holding a person's "platform:id" or id on its platform), for forget --user
BY_USER: tuple[tuple[str, str], ...] = (("usage", "user_id"), ("quotas", "subject"))
KEEP = {
    "seen_events": "delivery ids kept a few minutes against redelivery, no content",
    "pairing": "who may write to the bot (forget --user removes the person's row)",
    "audit_log": "the record of admin actions, the forget request itself among them",
    "api_tokens": "the operator's HTTP API tokens",
    "bothub_replicas": "replicas' heartbeats",
    "bothub_partitions": "each chat partition's fencing epoch and owner replica, no chat data",
    "bothub_schema": "the schema version",
    "sqlite_sequence": "SQLite's own counters",
    "relay_events": "large replies on their way between replicas, deleted within minutes (postgres/relay.py)",
    "fleet": "the operator's agents, bot identities (credentials sealed) and bindings",
    "fleet_changes": "the record of who changed agents, identities and bindings (no credentials)",
    "dashboard_accounts": "the operator's dashboard accounts (a password's hash, no chat data)",
}
# A member's own part of a group chat (/forget_me in a group), in this order: $1 is the chat, $2 the member's id on
# the platform, or with `by_person` their "platform:id". Their messages stay in the tree as ERASED (the answers
# hang under them), with no files or name; the traces of the runs that answered them and the conversations'
# summaries (which may quote them; compaction writes new ones) go; so do the lines the bot overheard from them and
# the background tasks they started, and their 👍/👎 on answers.
ERASED = "[erased at the request of the person who wrote it]"
BY_AUTHOR: tuple[tuple[str, str, bool], ...] = (
    ("traces", "DELETE FROM traces WHERE chat = $1 AND id IN (SELECT c.trace_id FROM messages AS c JOIN messages AS m "
               "ON c.chat = m.chat AND c.conversation_id = m.conversation_id AND c.parent_id = m.id "
               "WHERE m.chat = $1 AND m.author_id = $2 AND c.trace_id IS NOT NULL)", False),
    ("summaries", "DELETE FROM summaries WHERE chat = $1 AND conversation_id IN "
                  "(SELECT conversation_id FROM messages WHERE chat = $1 AND author_id = $2)", False),
    ("messages", f"UPDATE messages SET content = '{ERASED}', files = NULL, author = NULL, author_id = NULL "
                 "WHERE chat = $1 AND author_id = $2", False),
    ("group_context", "DELETE FROM group_context WHERE chat = $1 AND sender_id = $2", False),
    ("tasks", "DELETE FROM tasks WHERE chat = $1 AND user_id = $2", False),  # their prompts (a run ends as cancelled)
    ("feedback", "DELETE FROM feedback WHERE chat = $1 AND person = $2", True),
    ("usage", "DELETE FROM usage WHERE chat = $1 AND user_id = $2", True),
)
AUTHOR_FILES = "SELECT files FROM messages WHERE chat = $1 AND author_id = $2 AND files IS NOT NULL"
KEEP_PREFIXES = ("messages_fts",)  # SQLite's full-text index of messages: emptied by the messages' delete trigger


class ForgetStore(Protocol):
    async def forget_chat(self, chat: str) -> dict[str, int]:
        """Delete every row of the chat in one transaction; rows deleted per table (tables with none left out)."""
        ...

    async def forget_author(self, chat: str, platform: str, user_id: str) -> tuple[dict[str, int], list[str]]:
        """Erase one member's part of a group chat (BY_AUTHOR) in one transaction: rows per table, and the paths
        (in the chat's folder) of the files their messages carried, for the caller to remove."""
        ...

    async def forget_user(self, platform: str, user_id: str) -> dict[str, int]:
        """Delete the person's own rows outside chats (usage totals, pairing), in one transaction."""
        ...

    async def tables(self) -> list[str]:
        """Every table of the database (for the test that each is classified)."""
        ...
