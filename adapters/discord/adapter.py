"""Discord adapter: discord.py's gateway client running inside the hub's loop.

Slash commands and button presses are acknowledged at once (Discord allows 3 s) and the hub's replies
to them go through the interaction: the first one replaces the "thinking…" placeholder (or, for a
button, the message that holds the button), later ones are followups. The interaction token lives
15 minutes, so a reply still running near its end carries on as ordinary channel messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from adapters.discord.commands import (
    CommandButton,
    build_tree,
    check_token,
    configure_endpoints,
    conversation_choices,
)
from adapters.discord.inbound import INTERACTION_PREFIX, chat_of, interaction_key, parse_command, parse_message
from adapters.discord.outbound import NO_PINGS, guarded, render, render_one, view_for
from bot.adapter import AdapterServices, Capabilities, MessageHandler, SendError, SendFailed
from bot.config import Config, ConfigError, DiscordConfig
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)

READY_TIMEOUT = 30.0  # seconds start() waits for the gateway before returning anyway
TOKEN_MARGIN = 60.0  # seconds before the 15-minute interaction token expires that we stop relying on it
RATE_LIMIT_WAIT = 30.0  # longest 429 wait discord.py sleeps through itself (its minimum setting)
MAX_MOVED = 1000
GUILD_READY_TIMEOUT = 2.0  # discord.py waits this long after the last GUILD_CREATE before "ready"


def create(config: Config, env: Mapping[str, str], services: AdapterServices) -> DiscordAdapter:
    token = env.get("DISCORD_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("DISCORD_BOT_TOKEN is not set: create an application at "
                          "https://discord.com/developers/applications, add a bot and copy its token")
    return DiscordAdapter(token, config.discord, services)


@dataclass
class _Pending:
    """An acknowledged interaction whose replies go through its webhook."""

    interaction: discord.Interaction
    answered: bool = False  # the original response (placeholder or pressed message) has been replaced


@dataclass(frozen=True)
class _Owner:
    """A message posted through an interaction's webhook, so edits must use the same route."""

    interaction: discord.Interaction
    original: bool


class DiscordAdapter:
    name = "discord"
    capabilities = Capabilities(max_text=1900, edit_interval=1.0, group_edit_interval=1.0, tree_budget=1800)

    def __init__(self, token: str, settings: DiscordConfig, services: AdapterServices) -> None:
        configure_endpoints(settings.api_base, settings.gateway_url)
        intents = discord.Intents.default()
        intents.message_content = settings.message_content_intent
        self._token = token
        self._settings = settings
        self._services = services
        self._intents = intents
        self._client, self._tree = self._new_client()
        self._on_message: MessageHandler | None = None
        self._runner: asyncio.Task[None] | None = None
        self._online = False
        self._pending: dict[str, _Pending] = {}  # "i:<id>" -> interaction, oldest first
        self._owners: dict[str, _Owner] = {}  # message id -> interaction that posted it, oldest first
        self._moved: dict[str, str] = {}  # interaction message id -> channel message continuing it

    def _new_client(self) -> tuple[discord.Client, app_commands.CommandTree]:
        """A closed discord.Client cannot log in again, so every start (a watchdog restart too) gets a new one."""
        client = discord.Client(intents=self._intents, max_ratelimit_timeout=RATE_LIMIT_WAIT,
                                allowed_mentions=NO_PINGS, guild_ready_timeout=GUILD_READY_TIMEOUT)
        tree = build_tree(client, self._command, self._choices)
        client.add_dynamic_items(CommandButton)
        for event, handler in {"on_message": self._message, "on_command_button": self._button,
                               "on_ready": self._up, "on_resumed": self._up, "on_disconnect": self._down}.items():
            setattr(client, event, handler)
        return client, tree

    # ------------------------------------------------------------- lifecycle
    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        if self._client.is_closed():
            self._client, self._tree = self._new_client()
        self._runner = asyncio.create_task(self._client.start(self._token), name="discord-gateway")
        ready = asyncio.create_task(self._client.wait_until_ready())
        done, _ = await asyncio.wait({self._runner, ready}, timeout=READY_TIMEOUT,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready in done:
            self._online = True  # on_ready runs as its own task, maybe after we return
        else:
            ready.cancel()
        if self._runner in done:
            _raise_start_failure(self._runner)
        elif not done:
            log.warning("discord gateway not ready after %.0f s; still trying in the background", READY_TIMEOUT)
        if self._settings.sync_commands_on_start:
            await self._sync_global()

    async def _sync_global(self) -> None:
        """Opt-in (discord.sync_commands_on_start): a bulk overwrite is rate-limited, so not by default."""
        try:
            synced = await guarded(self._tree.sync())
        except SendError as e:
            log.warning("discord: registering slash commands failed (%s); the bot runs without an update", e)
            return
        log.info("discord: registered %d global slash commands", len(synced))

    async def stop(self) -> None:
        self._online = False
        await self._client.close()
        if self._runner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._runner, timeout=5.0)

    def connected(self) -> bool:
        return self._online and self._runner is not None and not self._runner.done()

    async def _up(self) -> None:
        self._online = True

    async def _down(self) -> None:
        self._online = False

    # --------------------------------------------------------------- inbound
    async def _message(self, message: discord.Message) -> None:
        me = self._client.user
        if me is None:
            return
        try:
            incoming = parse_message(message, me.id)
        except Exception:
            log.exception("discord: skipped a message that could not be parsed")
            return
        if incoming is not None:
            await self._deliver(incoming)

    async def _command(self, interaction: discord.Interaction, text: str) -> None:
        await self._acknowledge(interaction, thinking=True)
        await self._deliver(parse_command(interaction, text))

    async def _button(self, interaction: discord.Interaction, action: str) -> None:
        await self._acknowledge(interaction, thinking=False)  # the pressed message is then edited in place
        await self._deliver(parse_command(interaction, action, is_button=True))

    async def _acknowledge(self, interaction: discord.Interaction, *, thinking: bool) -> None:
        try:
            await interaction.response.defer(thinking=thinking)
        except (discord.HTTPException, discord.InteractionResponded) as e:  # e.g. redelivered: already acked
            log.warning("discord: could not acknowledge interaction %s: %s", interaction.id, e)
            return
        self._forget_expired()
        self._pending[interaction_key(interaction)] = _Pending(interaction)

    async def _choices(self, interaction: discord.Interaction, typed: str) -> list[app_commands.Choice[str]]:
        try:
            conversations = await self._services.list_conversations(chat_of(interaction))
        except Exception:
            log.exception("discord: listing conversations for autocomplete failed")
            return []
        return conversation_choices(conversations, typed)

    async def _deliver(self, incoming: IncomingMessage) -> None:
        if self._on_message is None:
            return
        try:
            await self._on_message(incoming)
        except Exception:
            log.exception("discord: the hub failed on message %s", incoming.message_id)

    # -------------------------------------------------------------- outbound
    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        parts = render(reply)
        view = view_for(reply.buttons)
        message_id = ""
        for index, content in enumerate(parts):
            message_id = await self._post(chat, content, view if index == len(parts) - 1 else None)
        return SentRef(chat, message_id)

    async def _post(self, chat: ChatRef, content: str, view: discord.ui.View | None) -> str:
        pending = self._live(chat.reply_to)
        if pending is None:
            extra = _present(view=view, reference=_reference(chat))
            message = await guarded(self._channel(chat).send(content, allowed_mentions=NO_PINGS, **extra))
            return str(message.id)
        interaction = pending.interaction
        if pending.answered:
            message = await guarded(interaction.followup.send(
                content, wait=True, allowed_mentions=NO_PINGS, **_present(view=view)))
        else:
            message = await guarded(interaction.edit_original_response(
                content=content, view=view, allowed_mentions=NO_PINGS))
        self._owners[str(message.id)] = _Owner(interaction, original=not pending.answered)
        pending.answered = True
        return str(message.id)

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
        elif owner is not None:
            await guarded(owner.interaction.followup.edit_message(
                int(target), content=content, view=view, allowed_mentions=NO_PINGS))
        else:
            message = self._channel(ref.chat).get_partial_message(_snowflake(target))
            await guarded(message.edit(content=content, view=view, allowed_mentions=NO_PINGS))

    async def typing(self, chat: ChatRef) -> None:
        pending = self._live(chat.reply_to)
        if pending is not None and pending.interaction.type is discord.InteractionType.application_command:
            return  # Discord already shows "is thinking…" for a deferred command
        await guarded(self._channel(chat).typing())

    def _live(self, reply_to: str | None) -> _Pending | None:
        """The interaction a reply should go through, unless its token is about to expire."""
        if not reply_to or not reply_to.startswith(INTERACTION_PREFIX):
            return None
        pending = self._pending.get(reply_to)
        return None if pending is None or _expiring(pending.interaction) else pending

    def _channel(self, chat: ChatRef) -> discord.PartialMessageable:
        return self._client.get_partial_messageable(_snowflake(chat.thread_id or chat.chat_id))

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
    if not chat.is_group or not chat.reply_to or not chat.reply_to.isdigit():
        return None
    channel_id = _snowflake(chat.thread_id or chat.chat_id)
    return discord.MessageReference(message_id=int(chat.reply_to), channel_id=channel_id, fail_if_not_exists=False)


def _snowflake(value: str) -> int:
    if not value.isdigit():
        raise SendFailed(f"not a discord id: {value!r}")
    return int(value)


def _raise_start_failure(runner: asyncio.Task[None]) -> None:
    error = runner.exception() if not runner.cancelled() else None
    if isinstance(error, discord.LoginFailure):
        raise ConfigError("Discord rejected DISCORD_BOT_TOKEN; copy the token again from the Bot page "
                          "of the developer portal") from error
    if isinstance(error, discord.PrivilegedIntentsRequired):
        raise ConfigError("discord.message_content_intent is on, but the Message Content intent is not "
                          "enabled for this bot (developer portal → Bot → Privileged Gateway Intents)") from error
    raise SendFailed(f"discord gateway stopped during start-up: {error!r}") from error


async def doctor(config: Config, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: does Discord accept the token?"""
    token = env.get("DISCORD_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("DISCORD_BOT_TOKEN is not set")
    return "token accepted, bot " + await check_token(token, config.discord.api_base or env.get("DISCORD_API_BASE"))
