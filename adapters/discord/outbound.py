"""Replies onto Discord: channel messages, or an interaction's webhook while its token lives.

The first reply to a slash command replaces the "thinking…" placeholder, later ones are followups;
for a button press, the pressed message is the interaction's original response (which the hub may
replace through `edit`), and replies are followups. The interaction token lives 15 minutes, so a reply
still running near its end carries on as ordinary channel messages. discord.py's failures become the
hub's typed SendErrors here.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import discord

from adapters.discord.render import NO_PINGS, render, render_one, view_for
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.messages import ButtonPress, ChatRef, Interaction, ReplyTo, SentRef
from bot.replies import Reply

T = TypeVar("T")
TOKEN_MARGIN = 60.0  # seconds before the 15-minute interaction token expires that we stop relying on it
MAX_MOVED = 1000
_UNKNOWN_CHANNEL = 10003


@dataclass
class _Pending:
    """An acknowledged interaction whose replies go through its webhook."""

    interaction: discord.Interaction
    answered: bool = False  # the original response (placeholder or pressed message) has been replaced


@dataclass(frozen=True)
class _Owner:
    """A message posted through an interaction's webhook, so edits must use the same route."""

    pending: _Pending
    original: bool

    @property
    def interaction(self) -> discord.Interaction:
        return self.pending.interaction


class DiscordOutbound:
    """Per-message state: which interaction posted what, and where an expiring one moved to."""

    def __init__(self, client: Callable[[], discord.Client]) -> None:
        self._client = client  # the adapter's current client (a restart makes a new one)
        self._pending: dict[str, _Pending] = {}  # interaction id -> interaction, oldest first
        self._owners: dict[str, _Owner] = {}  # message id -> interaction that posted it, oldest first
        self._moved: dict[str, str] = {}  # interaction message id -> channel message continuing it

    def acknowledged(self, interaction: discord.Interaction) -> None:
        """Replies to this interaction go through its webhook from now on; a pressed message is its original."""
        self._forget_expired()
        pending = self._pending[str(interaction.id)] = _Pending(interaction)
        if interaction.type is discord.InteractionType.component and interaction.message is not None:
            self._owners[str(interaction.message.id)] = _Owner(pending, original=True)

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        parts = render(reply)
        view = view_for(reply.buttons)
        message_id = ""
        for index, content in enumerate(parts):
            message_id = await self._post(chat, content, view if index == len(parts) - 1 else None)
        return SentRef(chat, message_id)

    async def _post(self, chat: ChatRef, content: str, view: discord.ui.View | None) -> str:
        pending = self._live(chat)
        if pending is None:
            extra = _present(view=view, reference=_reference(chat))
            message = await guarded(self._channel(chat).send(content, allowed_mentions=NO_PINGS, **extra))
            return str(message.id)
        interaction = pending.interaction
        # a command's first reply replaces "thinking…"; a press's original (the pressed message) is only
        # replaced when the hub edits it
        replaces = not pending.answered and isinstance(chat.origin, Interaction)
        if replaces:
            message = await guarded(interaction.edit_original_response(
                content=content, view=view, allowed_mentions=NO_PINGS))
        else:
            message = await guarded(interaction.followup.send(
                content, wait=True, allowed_mentions=NO_PINGS, **_present(view=view)))
        self._owners[str(message.id)] = _Owner(pending, original=replaces)
        pending.answered = True
        return str(message.id)

    async def post_file(self, chat: ChatRef, caption: str, file: discord.File) -> str:
        """A file goes into the channel itself (an interaction's webhook is kept for the text answer)."""
        extra = _present(content=caption or None, reference=_reference(chat))
        message = await guarded(self._channel(chat).send(file=file, allowed_mentions=NO_PINGS, **extra))
        return str(message.id)

    async def post_voice(self, chat: ChatRef, data: bytes, duration: float, waveform: str) -> str:
        """A voice message: the IS_VOICE_MESSAGE flag and one OGG attachment with its duration and waveform, and
        nothing else (Discord refuses content beside it). discord.py's `send` cannot set that flag, so the
        message goes through its HTTP client with the same parameters `send` would build."""
        voice = _VoiceFile(io.BytesIO(data), "voice-message.ogg", duration, waveform)
        with discord.http.handle_message_parameters(file=voice, flags=discord.MessageFlags(voice=True)) as params:
            message = await guarded(self._client().http.send_message(_snowflake(chat.thread_id or chat.chat_id),
                                                                       params=params))
        return str(message["id"])

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        content, view = render_one(reply), view_for(reply.buttons)
        target = self._moved.get(ref.message_id, ref.message_id)
        owner = self._owners.get(target)
        if owner is not None and _expiring(owner.interaction):
            channel = self._channel(ref.chat)
            moved = await guarded(channel.send(content, allowed_mentions=NO_PINGS, **_present(view=view)))
            self._moved[ref.message_id] = str(moved.id)
            while len(self._moved) > MAX_MOVED:
                del self._moved[next(iter(self._moved))]
        elif owner is not None and owner.original:
            await guarded(owner.interaction.edit_original_response(
                content=content, view=view, allowed_mentions=NO_PINGS))
            owner.pending.answered = True
        elif owner is not None:
            await guarded(owner.interaction.followup.edit_message(
                int(target), content=content, view=view, allowed_mentions=NO_PINGS))
        else:
            message = self._channel(ref.chat).get_partial_message(_snowflake(target))
            await guarded(message.edit(content=content, view=view, allowed_mentions=NO_PINGS))

    async def typing(self, chat: ChatRef) -> None:
        if isinstance(chat.origin, Interaction) and self._live(chat) is not None:
            return  # Discord already shows "is thinking…" for a deferred command
        await guarded(self._channel(chat).typing())

    def _live(self, chat: ChatRef) -> _Pending | None:
        """The interaction a reply should go through, unless its token is about to expire."""
        origin = chat.origin
        if isinstance(origin, Interaction):
            pending = self._pending.get(origin.interaction_id)
        elif isinstance(origin, ButtonPress):
            pending = self._pending.get(origin.press_id)
        else:
            return None
        return None if pending is None or _expiring(pending.interaction) else pending

    def _channel(self, chat: ChatRef) -> discord.PartialMessageable:
        return self._client().get_partial_messageable(_snowflake(chat.thread_id or chat.chat_id))

    def _forget_expired(self) -> None:
        _drop_expired(self._pending)
        _drop_expired(self._owners)


def _drop_expired(store: dict[str, Any]) -> None:
    """Forget interactions whose token has expired; entries are kept oldest first, so stop at a live one."""
    now = discord.utils.utcnow()
    while store:
        key, first = next(iter(store.items()))
        if first.interaction.expires_at > now:
            break
        del store[key]


def _present(**kwargs: Any) -> dict[str, Any]:
    """discord.py wants optional arguments left out rather than passed as None."""
    return {key: value for key, value in kwargs.items() if value is not None}


def _expiring(interaction: discord.Interaction) -> bool:
    return (interaction.expires_at - discord.utils.utcnow()).total_seconds() < TOKEN_MARGIN


def _reference(chat: ChatRef) -> discord.MessageReference | None:
    """In guild channels an answer replies to the message it answers, so the thread of talk stays clear."""
    answered = chat.origin
    if not chat.is_group or not isinstance(answered, ReplyTo) or not answered.message_id.isdigit():
        return None
    channel_id = _snowflake(chat.thread_id or chat.chat_id)
    return discord.MessageReference(message_id=int(answered.message_id), channel_id=channel_id,
                                    fail_if_not_exists=False)


def _snowflake(value: str) -> int:
    if not value.isdigit():
        raise SendFailed(f"not a discord id: {value!r}")
    return int(value)


async def guarded(call: Awaitable[T]) -> T:
    """Await a discord.py call, raising only the hub's typed SendErrors.

    discord.py sleeps through 429s itself when the wait is short (bot routes: up to 30 s, the
    `max_ratelimit_timeout` the client is built with; interaction webhooks: always) and retries up
    to 5 times; a longer wait raises discord.RateLimited, and running out of tries an HTTPException
    with status 429. Both become RateLimited here, so the hub's pacing takes over.
    """
    try:
        return await call
    except discord.RateLimited as e:
        raise RateLimited(e.retry_after) from e
    except discord.Forbidden as e:
        raise ChatUnavailable(f"discord refused: {e.text or e.status}") from e
    except discord.HTTPException as e:
        raise _http_error(e) from e
    except (TimeoutError, aiohttp.ClientError) as e:
        raise SendFailed(f"discord unreachable: {type(e).__name__}") from e


def _http_error(e: discord.HTTPException) -> SendError:
    if e.status == 429:
        return RateLimited(_retry_after(e))
    if e.status == 404 and e.code == _UNKNOWN_CHANNEL:
        return ChatUnavailable("discord channel no longer exists")
    return SendFailed(f"discord answered {e.status} (code {e.code}): {e.text}")


def _retry_after(e: discord.HTTPException) -> float:
    try:
        return float(e.response.headers.get("Retry-After", 1.0))
    except (AttributeError, ValueError):
        return 1.0


class _VoiceFile(discord.File):
    """An upload that carries what a voice message's attachment entry needs."""

    def __init__(self, fp: io.BytesIO, filename: str, duration: float, waveform: str) -> None:
        super().__init__(fp, filename=filename)
        self.duration, self.waveform = duration, waveform

    def to_dict(self, index: int) -> dict[str, Any]:
        return {**super().to_dict(index), "duration_secs": round(self.duration, 2), "waveform": self.waveform}
