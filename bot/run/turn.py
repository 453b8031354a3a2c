"""What one run answers: who asked where (the turn), and the inbox entry it answers (the ticket)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.messages import ChatRef
from bot.store import InboxStore
from bot.tree.model import AttachedFile, Message


@dataclass
class Ticket:
    """The inbox entry a turn answers. The ids of the reply's messages are stored as they are sent, so after a
    crash the reply is completed by editing them (`replies`); the answer is stored together with the entry's
    finish (one round trip), and `finished` tells the hub it has nothing left to do."""

    entry: int
    session: str  # the chat's storage key: the entry's writes are fenced by its partition
    inbox: InboxStore
    replies: tuple[str, ...] = ()
    seq: int | None = None  # the entry's place in the chat's sequence (None: not known here)
    finished: bool = False

    async def sent(self, message_ids: list[str]) -> None:
        await self.inbox.replied(self.session, self.entry, message_ids)


@dataclass(frozen=True, slots=True)
class TurnContext:
    """Who asked, for tools and prompts; built whole by the hub (or a scheduled job) before the run."""

    chat: ChatRef
    user_id: str
    user_name: str
    user_text: str
    is_admin: bool
    lang: str
    conversation_id: str | None = None
    job_id: str | None = None  # a scheduled job started this turn: its messages are marked with it
    silent_reply: str | None = None  # an answer of exactly this is not sent (heartbeat: HEARTBEAT_OK)
    files: tuple[AttachedFile, ...] = ()  # what came with the message, already in the chat's folder
    ticket: Ticket | None = None  # the inbox entry this turn answers (none for /retry)
    model: str | None = None  # this turn's model over the chat's (/retry <model>)


def user_message(turn: TurnContext) -> Message:
    """The turn's message as the tree keeps it: its files named for the model, its author in a shared chat."""
    text = "\n".join(part for part in (turn.user_text, describe(turn.files)) if part)
    if turn.chat.is_group:  # the model must know who is speaking in a shared chat
        return Message.new("user", f"[{turn.user_name}] {text}", author=turn.user_name, author_id=turn.user_id,
                           job_id=turn.job_id, files=turn.files)
    return Message.new("user", text, job_id=turn.job_id, files=turn.files)


def describe(files: tuple[AttachedFile, ...]) -> str:
    """The lines the model reads about a message's files, so file tools can find them by name."""
    return "\n".join(f"[{f.kind} attached: {f.name} ({f.mime}, {f.size} bytes), saved as {f.path}]"
                     for f in files)
