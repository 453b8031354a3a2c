"""Platform-neutral message types: what adapters hand to the hub and how the hub addresses replies."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class AttachmentKind(StrEnum):
    """What a file that came with a message is; the values are what the inbox stores."""

    IMAGE = "image"
    FILE = "file"
    AUDIO = "audio"  # voice messages too
    VIDEO = "video"
    STICKER = "sticker"
    OTHER = "other"  # a shared card, a location: nothing to save

    @classmethod
    def parse(cls, value: str) -> AttachmentKind:
        """A stored kind; one this version does not know is OTHER (it is never fetched)."""
        try:
            return cls(value)
        except ValueError:
            return cls.OTHER


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file that came with a message: what it is, and the adapter's own handle to fetch it."""

    kind: AttachmentKind
    name: str = ""
    mime: str = ""  # as the platform claims it; the bytes are checked against it
    size: int | None = None  # bytes, when the platform says
    handle: str = ""  # opaque to core: a file id, a URL, a message resource key


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """One inbound event, parsed once at the edge (mention stripped, markup removed)."""

    platform: str  # the adapter's name (its package under adapters/)
    chat_id: str
    thread_id: str | None  # a topic or thread inside the chat: a session of its own
    message_id: str  # platform id of the event; the dedupe key within a chat
    user_id: str
    user_name: str
    is_group: bool
    mentioned: bool  # @bot, reply to bot, DM, slash command or button
    text: str
    reply_to: str | None = None  # the message the user replied to (a quote), not the origin of ours
    attachments: tuple[Attachment, ...] = ()
    origin: Origin | None = None  # what the answer responds to; None: this message (ReplyTo(message_id))
    identity: str = ""  # which bot account of the platform received it ("": the default one); set by core
    # the platform's own order of events (an update's sequence number, a time-ordered message id, a creation time
    # in ms): a chat's messages run in this order where it differs from the order they were accepted; None: none
    order: int | None = None

    @property
    def is_button(self) -> bool:
        return isinstance(self.origin, ButtonPress)

    @property
    def chat(self) -> ChatRef:
        origin = self.origin if self.origin is not None else ReplyTo(self.message_id)
        return ChatRef(self.platform, self.chat_id, self.thread_id, self.is_group, origin, self.identity)

    @property
    def address(self) -> str:
        return address(self.platform, self.identity)


@dataclass(frozen=True, slots=True)
class Overheard:
    """A group message not addressed to the bot, which the platform delivered anyway (privacy mode off, the
    content intent, "read all group messages"). Never answered: kept briefly as context for the next time
    someone in the same chat or thread addresses the bot."""

    platform: str
    chat_id: str
    thread_id: str | None  # context stays inside its thread, like the session
    message_id: str  # a redelivery is kept once
    user_id: str
    user_name: str
    text: str  # markup removed; may be empty when only files came
    attachments: tuple[Attachment, ...] = ()  # shown to the model as short placeholders, never fetched
    identity: str = ""  # which bot account overheard it ("": the default one)


InboundEvent = IncomingMessage | Overheard  # what an adapter hands the hub


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """The answer responds to an ordinary message (in groups it may quote it)."""

    message_id: str


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """The answer responds to a button press: its first reply may replace the pressed message."""

    press_id: str  # the platform's id of the press (callback query, interaction, card action event)
    message_id: str | None  # the message holding the button, when known


@dataclass(frozen=True, slots=True)
class Interaction:
    """The answer responds to a command the platform delivered as an acknowledged interaction."""

    interaction_id: str


Origin = ReplyTo | ButtonPress | Interaction


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a reply goes, and what it answers."""

    platform: str
    chat_id: str
    thread_id: str | None = None
    is_group: bool = False
    origin: Origin | None = None
    identity: str = ""  # the bot account that answers here ("": the platform's default one)

    @property
    def address(self) -> str:
        return address(self.platform, self.identity)


def address(platform: str, identity: str) -> str:
    """Which running adapter a chat is reached through: the platform's name for its default bot account,
    `platform@identity` for another one. It names deliveries, health lines and metrics."""
    return f"{platform}@{identity}" if identity else platform


@dataclass(frozen=True, slots=True)
class SentRef:
    """A message the adapter sent, so it can be edited later."""

    chat: ChatRef
    message_id: str
    # an ephemeral draft, not a message (bot.adapter.Drafting): nothing to record or find after a restart, and the
    # answer it previews still has to be sent
    draft: bool = False


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """One message of a chat's current branch, as a chat window shows it (the text is Markdown)."""

    id: str
    number: int  # its `/goto N` number
    role: str  # "user" | "assistant"
    text: str
    created_at: datetime
    trace_id: str | None = None  # the run that wrote an answer
    tools: tuple[str, ...] = ()  # tools an answer's step called
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of the current branch, oldest first: `more` says older messages lie above `messages[0]`."""

    conversation_id: str | None
    title: str
    messages: tuple[HistoryMessage, ...]
    more: bool
