"""Full-text search over every chat's messages for the dashboard: FTS5 with the trigram tokenizer.

Trigrams make any substring of three or more characters searchable, Chinese and Japanese included, with
no word segmentation. Shorter words (天气, "go") cannot use the index: they are matched with LIKE over
what the indexed words already narrowed down, or, when a query has only short words, over recent
messages newest first until enough are found.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.store.dashboard import SearchHit, like_pattern, platform_range, snippet_around
from bot.store.sqlite.database import Database

MAX_WORDS = 8
SNIPPET_TOKENS = 64  # trigrams (about characters) of context: the most FTS5 allows
_OPEN, _CLOSE = "\x02", "\x03"


def _phrase(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _pieces(marked: str) -> tuple[tuple[str, bool], ...]:
    """Split FTS5's snippet (matches between _OPEN and _CLOSE) into (text, is_match) pieces."""
    out: list[tuple[str, bool]] = []
    for i, part in enumerate(marked.split(_OPEN)):
        inside, _, after = part.partition(_CLOSE) if i else ("", "", part)
        if inside:
            out.append((inside, True))
        if after:
            out.append((after, False))
    return tuple(out)


async def search(db: Database, query: str, chat: str = "", platform: str = "", limit: int = 50,
                 live_only: bool = False) -> list[SearchHit]:
    """Messages containing every word of `query` (case-insensitive), newest first; `live_only` leaves out
    conversations deleted and waiting for their purge."""
    words = list(dict.fromkeys(query.split()))[:MAX_WORDS]
    if not words or limit < 1:
        return []
    long_words = [w for w in words if len(w) >= 3]
    short_words = [w for w in words if len(w) < 3]
    where: list[str] = []
    params: list[Any] = []
    if long_words:
        where.append("messages_fts MATCH ?")
        params.append(" AND ".join(_phrase(w) for w in long_words))
    for word in short_words:
        where.append("m.content LIKE ? ESCAPE '\\'")
        params.append(like_pattern(word))
    if chat:
        where.append("m.chat = ?")
        params.append(chat)
    if platform:
        where.append("m.chat >= ? AND m.chat < ?")
        params += platform_range(platform)
    columns = "m.chat, m.conversation_id, m.id, m.role, m.created_at"
    live = (" JOIN conversations AS c ON c.chat = m.chat AND c.id = m.conversation_id AND c.deleted_at IS NULL"
            if live_only else "")
    if long_words:
        sql = (f"SELECT {columns}, snippet(messages_fts, 0, '{_OPEN}', '{_CLOSE}', '…', {SNIPPET_TOKENS}) "
               f"FROM messages_fts JOIN messages AS m ON m.seq = messages_fts.rowid{live} "
               f"WHERE {' AND '.join(where)} ORDER BY messages_fts.rowid DESC LIMIT ?")
    else:
        sql = (f"SELECT {columns}, m.content FROM messages AS m{live} WHERE {' AND '.join(where)} "
               "ORDER BY m.seq DESC LIMIT ?")
    rows = await db.read(lambda conn: conn.execute(sql, [*params, limit]).fetchall())
    return [SearchHit(c, conv, mid, role, datetime.fromisoformat(at),
                      _pieces(text) if long_words else snippet_around(text, short_words[0]))
            for c, conv, mid, role, at, text in rows]
