"""Telegram updates → IncomingMessage, decided once here: DM or group, addressed or not, mention stripped.
A group message not addressed to the bot (delivered when privacy mode is off) becomes Overheard.

PTB objects stop at this module. Anything that is not a message or a button press (edited messages,
channel posts, membership changes…) becomes None and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from telegram import CallbackQuery, Chat, Message, MessageEntity, Update, User

from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage, Overheard

PLATFORM = "telegram"
_MEDIA_KINDS = (  # message field → (kind, name when the platform gives none, MIME when it gives none)
    ("photo", (AttachmentKind.IMAGE, "photo.jpg", "image/jpeg")),
    ("sticker", (AttachmentKind.STICKER, "sticker.webp", "image/webp")),
    ("voice", (AttachmentKind.AUDIO, "voice.ogg", "audio/ogg")),
    ("video_note", (AttachmentKind.VIDEO, "video.mp4", "video/mp4")),
    ("video", (AttachmentKind.VIDEO, "video.mp4", "video/mp4")),
    ("animation", (AttachmentKind.VIDEO, "animation.mp4", "video/mp4")),
    ("audio", (AttachmentKind.AUDIO, "audio.mp3", "audio/mpeg")),
    ("document", (AttachmentKind.FILE, "document", "")),
)
DOWNLOAD_LIMIT = 20_000_000  # the Bot API serves files up to 20 MB


@dataclass(frozen=True, slots=True)
class BotIdentity:
    id: int
    username: str


@dataclass(frozen=True, slots=True)
class Inbound:
    message: IncomingMessage | Overheard
    callback_query_id: str | None = None  # a button press, to be acknowledged once the hub has it


def parse_update(update: Update, me: BotIdentity) -> Inbound | None:
    """The update's id is its place in the bot's order of updates (IncomingMessage.order)."""
    if update.callback_query is not None:
        return _ordered(_parse_press(update.callback_query), update.update_id)
    msg = update.message
    if msg is None or msg.chat.type == Chat.CHANNEL:
        return None
    return _ordered(_parse_message(msg, me), update.update_id)


def _ordered(parsed: Inbound | None, update_id: int) -> Inbound | None:
    if parsed is None or not isinstance(parsed.message, IncomingMessage):
        return parsed
    return replace(parsed, message=replace(parsed.message, order=update_id))


def _parse_message(msg: Message, me: BotIdentity) -> Inbound | None:
    sender = _sender(msg)
    if sender is None:
        return None
    user_id, user_name = sender
    text = msg.text if msg.text is not None else msg.caption or ""
    attachments = _attachments(msg)
    if not text and not attachments:
        return None  # service messages: joins, pins, topic created…
    addressed_text = _address(msg, text, me)
    if addressed_text is None:
        return None  # "/cmd@otherbot" is for another bot, whatever the chat
    text, addressed = addressed_text
    is_group = msg.chat.type != Chat.PRIVATE
    if is_group and not addressed and not _replies_to_bot(msg, me):
        return Inbound(Overheard(PLATFORM, str(msg.chat.id), _thread(msg), str(msg.message_id), user_id, user_name,
                                 text.strip(), attachments))
    reply = msg.reply_to_message
    return Inbound(
        IncomingMessage(
            platform=PLATFORM,
            chat_id=str(msg.chat.id),
            thread_id=_thread(msg),
            message_id=str(msg.message_id),
            user_id=user_id,
            user_name=user_name,
            is_group=is_group,
            mentioned=True,
            text=text.strip(),
            reply_to=str(reply.message_id) if reply is not None and not _is_topic_root(msg) else None,
            attachments=attachments,
        )
    )


def _parse_press(query: CallbackQuery) -> Inbound | None:
    source = query.message
    if source is None or not query.data:
        return None  # inline-mode or game buttons: not ours
    chat = source.chat
    thread = str(source.message_thread_id) if isinstance(source, Message) and source.is_topic_message else None
    return Inbound(
        IncomingMessage(
            platform=PLATFORM,
            chat_id=str(chat.id),
            thread_id=thread,
            message_id=f"cb:{query.id}",
            user_id=str(query.from_user.id),
            user_name=_name(query.from_user),
            is_group=chat.type != Chat.PRIVATE,
            mentioned=True,
            text=query.data,
            origin=ButtonPress(query.id, str(source.message_id) if source.message_id else None),
        ),
        query.id,
    )


def _sender(msg: Message) -> tuple[str, str] | None:
    user = msg.from_user
    if msg.sender_chat is not None:  # anonymous admin or a linked channel speaking in the group
        return str(msg.sender_chat.id), msg.sender_chat.title or msg.sender_chat.effective_name or ""
    if user is None or user.is_bot:
        return None
    return str(user.id), _name(user)


def _name(user: User) -> str:
    return user.full_name or (f"@{user.username}" if user.username else str(user.id))


def _thread(msg: Message) -> str | None:
    """Forum topics are sessions; reply 'threads' in ordinary groups are not."""
    return str(msg.message_thread_id) if msg.is_topic_message and msg.message_thread_id else None


def _is_topic_root(msg: Message) -> bool:
    reply = msg.reply_to_message
    return bool(msg.is_topic_message and reply is not None and reply.forum_topic_created is not None)


def _replies_to_bot(msg: Message, me: BotIdentity) -> bool:
    reply = msg.reply_to_message
    return (
        reply is not None
        and not _is_topic_root(msg)
        and reply.from_user is not None
        and reply.from_user.id == me.id
    )


def _address(msg: Message, text: str, me: BotIdentity) -> tuple[str, bool] | None:
    """Strip what addresses this bot: (text, addressed to us), or None for another bot's command."""
    handle = f"@{me.username}".lower()
    cuts: list[tuple[int, int]] = []  # UTF-16 (offset, length) to remove
    addressed = False
    entities = msg.entities if msg.text is not None else msg.caption_entities
    for entity in entities or ():
        part = _slice16(text, entity.offset, entity.length)
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            command, _, target = part.partition("@")
            if not target or f"@{target}".lower() == handle:
                addressed = True
                cuts.append((_len16(command), _len16(part) - _len16(command)))
            else:
                return None
        elif entity.type == MessageEntity.MENTION and part.lower() == handle:
            addressed = True
            cuts.append((entity.offset, entity.length))
        elif entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == me.id:
            addressed = True
    for offset, length in sorted(cuts, reverse=True):
        text = _cut16(text, offset, length)
    return text, addressed


def _len16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _slice16(text: str, offset: int, length: int) -> str:
    return text.encode("utf-16-le")[offset * 2 : (offset + length) * 2].decode("utf-16-le", "replace")


def _cut16(text: str, offset: int, length: int) -> str:
    raw = text.encode("utf-16-le")
    before, after = raw[: offset * 2].decode("utf-16-le", "replace"), raw[(offset + length) * 2 :]
    rest = after.decode("utf-16-le", "replace")
    if before.endswith((" ", "\n")) and rest.startswith(" "):
        rest = rest[1:]
    return before + rest


def _attachments(msg: Message) -> tuple[Attachment, ...]:
    for field, (kind, default_name, default_mime) in _MEDIA_KINDS:
        value = getattr(msg, field, None)
        if not value:
            continue
        if field == "photo":  # sizes come smallest first: the largest the Bot API will still serve
            fitting = [p for p in value if (p.file_size or 0) <= DOWNLOAD_LIMIT]
            value = fitting[-1] if fitting else value[0]
        mime = getattr(value, "mime_type", None) or default_mime
        if kind is AttachmentKind.FILE and mime.startswith("image/"):
            kind = AttachmentKind.IMAGE  # a picture sent "as a file" is still a picture
        name = getattr(value, "file_name", None) or default_name
        return (Attachment(kind=kind, name=name, mime=mime, size=value.file_size, handle=value.file_id),)
    return ()
