"""A typed line → IncomingMessage: the terminal's user is always talking to the bot, one to one."""

from __future__ import annotations

import uuid

from bot.messages import IncomingMessage

PLATFORM = "console"
EXIT_WORDS = {"/exit", "/quit"}
INTERRUPT = "/stop"


def is_exit(line: str) -> bool:
    return line.strip() in EXIT_WORDS


def is_interrupt(line: str | None) -> bool:
    """`/stop` is meant for the answer still running, so a script sends it without waiting."""
    return line is not None and line.strip().lower() == INTERRUPT


def parse_line(chat: str, line: str) -> IncomingMessage | None:
    """None for a blank line."""
    if not line.strip():
        return None
    return IncomingMessage(
        platform=PLATFORM, chat_id=chat, thread_id=None, message_id=uuid.uuid4().hex,
        user_id="local", user_name="you", is_group=False, mentioned=True, text=line,
    )
