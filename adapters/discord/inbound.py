"""Parse discord.py messages and interactions once, at the edge, into neutral IncomingMessages.

Rules: DMs always reach the hub; in guild channels only messages that mention the bot (a user
mention in `message.mentions`, never @everyone/@here) or reply to it are addressed to it. Other guild
messages become Overheard (group context) when they carry anything: without the message-content intent
Discord sends them empty. A thread is its own session (thread_id = thread channel id, chat_id = parent
channel id). Bots, the hub itself included, are ignored.
"""

from __future__ import annotations

import re

import discord

from bot.messages import Attachment, AttachmentKind, ButtonPress, ChatRef, IncomingMessage, Interaction, Overheard

PLATFORM = "discord"
INTERACTION_PREFIX = "i:"  # message_id (the dedupe key) of a slash command or button press
_USER_MENTION = re.compile(r"<@!?(\d+)>")
_CONVERSATIONAL = (discord.MessageType.default, discord.MessageType.reply)


def interaction_key(interaction: discord.Interaction) -> str:
    return f"{INTERACTION_PREFIX}{interaction.id}"


def parse_message(message: discord.Message, bot_id: int) -> IncomingMessage | Overheard | None:
    """The IncomingMessage for a plain message meant for the bot, Overheard for other guild talk, or None."""
    if message.author.bot or message.type not in _CONVERSATIONAL:
        return None
    private = is_dm(message.channel)
    reply_to = message.reference.message_id if message.reference else None
    replied = message.reference.resolved if message.reference else None
    own_roles = _own_role_ids(message, bot_id)
    to_bot = (any(user.id == bot_id for user in message.mentions) or bool(own_roles)
              or (isinstance(replied, discord.Message) and replied.author.id == bot_id))
    text = _clean_text(message, bot_id, own_roles)
    attachments = _attachments(message)
    if not text and not attachments:  # e.g. a reply without a ping while the content intent is off
        return None
    chat_id, thread_id = _place(message.channel, message.channel.id)
    if not (private or to_bot):
        return Overheard(PLATFORM, chat_id, thread_id, str(message.id), str(message.author.id),
                         message.author.display_name, text, attachments)
    return IncomingMessage(
        platform=PLATFORM, chat_id=chat_id, thread_id=thread_id, message_id=str(message.id),
        user_id=str(message.author.id), user_name=message.author.display_name, is_group=not private,
        mentioned=True, text=text, reply_to=str(reply_to) if reply_to else None, attachments=attachments,
        order=message.id)  # a snowflake: its creation time first, so the channel's order


def parse_command(interaction: discord.Interaction, text: str) -> IncomingMessage:
    """A slash command or a button press becomes the command text, answered through this interaction."""
    chat = chat_of(interaction)
    return IncomingMessage(
        platform=PLATFORM, chat_id=chat.chat_id, thread_id=chat.thread_id,
        message_id=interaction_key(interaction), user_id=str(interaction.user.id),
        user_name=interaction.user.display_name, is_group=chat.is_group, mentioned=True, text=text,
        origin=chat.origin, order=interaction.id)


def chat_of(interaction: discord.Interaction) -> ChatRef:
    """The session an interaction belongs to (also used to scope /switch autocomplete)."""
    chat_id, thread_id = _place(interaction.channel, interaction.channel_id or 0)
    pressed = interaction.message if interaction.type is discord.InteractionType.component else None
    origin = (ButtonPress(str(interaction.id), str(pressed.id)) if pressed is not None
              else Interaction(str(interaction.id)))
    return ChatRef(PLATFORM, chat_id, thread_id, is_group=not is_dm(interaction.channel), origin=origin)


def is_dm(channel: object) -> bool:
    """Only a one-to-one DM is private; a group DM is a group, for messages and interactions alike."""
    return isinstance(channel, discord.DMChannel) or getattr(channel, "type", None) is discord.ChannelType.private


def _place(channel: object, channel_id: int) -> tuple[str, str | None]:
    """(chat_id, thread_id): a thread is a session of its own inside its parent channel."""
    if isinstance(channel, discord.Thread):
        return str(channel.parent_id), str(channel.id)
    return str(channel_id), None


def _own_role_ids(message: discord.Message, bot_id: int) -> set[int]:
    """Discord's autocomplete often turns "@Bot" into a mention of the bot's managed role, not its user."""
    roles = getattr(message, "role_mentions", ())  # discord.py leaves it unset when the payload omits it
    return {role.id for role in roles if role.tags is not None and role.tags.bot_id == bot_id}


def _clean_text(message: discord.Message, bot_id: int, own_roles: set[int]) -> str:
    """Drop the bot's own mention (user or managed role); show other user mentions as @name, not raw ids."""
    names = {user.id: user.display_name for user in message.mentions}

    def replace(match: re.Match[str]) -> str:
        user_id = int(match.group(1))
        if user_id == bot_id:
            return ""
        return f"@{names[user_id]}" if user_id in names else match.group(0)

    text = _USER_MENTION.sub(replace, message.content)
    for role_id in own_roles:
        text = text.replace(f"<@&{role_id}>", "")
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _attachments(message: discord.Message) -> tuple[Attachment, ...]:
    found = []
    for a in message.attachments:
        mime = (a.content_type or "").split(";", 1)[0].strip().lower()  # "text/plain; charset=utf-8"
        found.append(Attachment(kind=_kind(mime), name=a.filename, mime=mime, size=a.size, handle=a.url))
    found += [Attachment(kind=AttachmentKind.STICKER, name=s.name) for s in message.stickers]
    return tuple(found)


def _kind(mime: str) -> AttachmentKind:
    major = mime.split("/", 1)[0]
    return AttachmentKind(major) if major in ("image", "audio", "video") else AttachmentKind.FILE
