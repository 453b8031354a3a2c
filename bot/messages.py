"""Platform-neutral message types: what adapters hand to the hub and how the hub addresses replies."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Attachment:
    """A non-text part of a message; the core only needs to know it is there."""

    kind: str  # "photo" | "sticker" | "voice" | "document" | "video" | "other"
    name: str = ""


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
    reply_to: str | None = None
    attachments: tuple[Attachment, ...] = ()
    is_button: bool = False  # came from a button press: the adapter may update that message in place

    @property
    def chat(self) -> ChatRef:
        return ChatRef(self.platform, self.chat_id, self.thread_id, self.is_group, self.message_id)


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a reply goes; `reply_to` is the inbound message id the reply answers."""

    platform: str
    chat_id: str
    thread_id: str | None = None
    is_group: bool = False
    reply_to: str | None = None


@dataclass(frozen=True, slots=True)
class SentRef:
    """A message the adapter sent, so it can be edited later."""

    chat: ChatRef
    message_id: str
