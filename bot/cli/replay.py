"""`bothub replay --chat KEY --since DATE [--model M]`: every answer of a chat since a day run again on its own
history, with the tool results the tree recorded (no tool is called), and a table of what changed — the check
of a prompt or model change against real questions. Nothing is stored in the trees or sent to the chat."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import UTC, date, datetime

from bot.app import App
from bot.chats.sessions import Session, SessionKey
from bot.config import Config
from bot.i18n import t
from bot.messages import ChatRef
from bot.run.replay import Replays, is_answer, stored_run
from bot.run.replay_report import changed_lines, replay_head
from bot.run.turn import TurnContext


def session_key(chat: str) -> SessionKey:
    platform, _, rest = chat.partition(":")
    chat_id, _, thread = rest.partition("#")
    return SessionKey(platform, chat_id, thread or None)


async def replay_chat(cfg: Config, env: Mapping[str, str], chat: str, since: date, model: str | None) -> int:
    lang, start = cfg.language, datetime(since.year, since.month, since.day, tzinfo=UTC)
    app = App(cfg, env)
    replays = Replays(app.runner)  # the default agent's
    await app.store.open()
    try:
        key = session_key(chat)
        rows: list[tuple[str, int, int, str]] = []
        for info in await app.store.conversations.recent(chat, limit=1000, include_archived=True):
            conv = await app.store.conversations.load(chat, info.id, "")
            assert conv is not None
            for answer in list(conv.messages.values()):
                run = stored_run(conv, answer) if answer.created_at >= start else None
                if run is None or not is_answer(answer) or replay_head(answer.content) or answer.number is None:
                    continue
                path, recorded = run
                original = await app.store.traces.get(chat, answer.trace_id) if answer.trace_id else None
                chosen = model or (original.model if original else cfg.llm.chat_model)
                session = Session(key, info.id, info.root_id, info.role, path=path, loaded=True)
                turn = TurnContext(ChatRef(key.platform, key.chat_id, key.thread_id), "", "", path[-1].content,
                                   False, lang)
                done = await replays.run(session, turn, None, path, recorded, chosen, "")
                before = f"{original.prompt_tokens + original.completion_tokens}" if original else "—"
                after = done.trace.prompt_tokens + done.trace.completion_tokens
                rows.append((info.id, answer.number, changed_lines(answer.content, done.text), f"{before} → {after}"))
    finally:
        await app.store.close()
    print(t(lang, "cli_replay_header"))
    for conv_id, number, lines, tokens in rows:
        print(f"{conv_id}  #{number:<5} {t(lang, 'cli_replay_changed' if lines else 'cli_replay_same'):10} "
              f"{lines:>5}  {tokens}")
    changed = sum(1 for row in rows if row[2])
    print(t(lang, "cli_replay_summary", changed=changed, unchanged=len(rows) - changed))
    return 0


def parse_day(text: str, lang: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        print(t(lang, "cli_replay_bad_date", value=text), file=sys.stderr)
        return None
