"""Discord adapter: discord.py's gateway client running inside the hub's loop.

Slash commands and button presses are acknowledged at once (Discord allows 3 s); the hub's replies
to them then go through the interaction (outbound.py). With `discord.shard_count`, the gateway is sharded:
this replica runs the shards it holds (its fair share, through the database, or `discord.shard_ids`), and
runs again with the new set when that changes; a replica without shards still sends through REST.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Mapping

import aiohttp
import discord
from discord import app_commands

from adapters.discord import DiscordConfig
from adapters.discord.commands import (
    ChineseDescriptions,
    CommandButton,
    build_tree,
    check_token,
    configure_endpoints,
)
from adapters.discord.files import DiscordFiles, attachment_origins
from adapters.discord.inbound import chat_of, parse_command, parse_message
from adapters.discord.outbound import DiscordOutbound, guarded
from adapters.discord.render import NO_PINGS
from bot.adapter import (
    AdapterServices,
    Capabilities,
    ConversationChoice,
    MessageHandler,
    NotKept,
    SendError,
    SendFailed,
)
from bot.config import ConfigError, proxy_for
from bot.httpkit.fence import fenced_trace
from bot.messages import ChatRef, InboundEvent, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)
# The bot never joins voice: discord.py's "PyNaCl/davey is not installed" warnings are noise to the operator.
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False

READY_TIMEOUT = 30.0  # seconds start() waits for the gateway before returning anyway
RATE_LIMIT_WAIT = 30.0  # longest 429 wait discord.py sleeps through itself (its minimum setting)
# discord.py declares "ready" this long after the last GUILD_CREATE (its default, 2 s, was most of our start-up).
# Discord sends a bot's guilds right after READY; one arriving later is still taken in (as guild_available), and
# nothing here waits for member chunks (no members intent), so a short quiet gap is enough. Only the adapter's
# "connected" (/readyz) waits for it: messages are handled as they arrive either way.
GUILD_READY_TIMEOUT = 0.05
SHARDS = "discord-shard"  # the role group replicas share the gateway's shards through


DISCORD_API = "https://discord.com/api"  # discord.py's own default base


def create(settings: DiscordConfig, env: Mapping[str, str], services: AdapterServices) -> DiscordAdapter:
    token = env.get("DISCORD_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("DISCORD_BOT_TOKEN is not set: create an application at "
                          "https://discord.com/developers/applications, add a bot and copy its token")
    endpoints = settings.model_copy(update={"api_base": api_base(settings, env),
                                            "gateway_url": env.get("DISCORD_GATEWAY_URL") or settings.gateway_url})
    return DiscordAdapter(token, endpoints, services, discord_proxy(settings, env))


class DiscordAdapter:
    name = "discord"
    capabilities = Capabilities(
        max_text=1900,
        can_edit=True,
        edit_interval=1.0,
        group_edit_interval=1.0,
        buttons=True,
        feedback=False,  # no native feedback control: answers keep their look
        groups=True,
        overhears=True,
        refuses_sends=True,
        tree_budget=1800,
        burst=5,  # 5 messages per 5 s in one channel
        rate=1.0,
        group_send_window=None,  # no limit on new messages beyond the channel's own
        chat_send_window=None,
        global_window=(50, 1.0),
        edit_window=None,
        send_window=None,
        threads_paced_apart=True,  # a thread is a channel with its own limit
        interactions_paced_apart=True,  # followups and edits through the interaction webhook
        replace_pressed=True,
        closes_streams=False,
        restart_when_down=True,
        reorders=True,
        columns=0,
    )

    def __init__(self, token: str, settings: DiscordConfig, services: AdapterServices,
                 proxy: str | None = None) -> None:
        configure_endpoints(settings.api_base, settings.gateway_url)
        intents = discord.Intents.default()
        intents.message_content = settings.message_content_intent
        self._token = token
        self._settings = settings
        self._services = services
        self._intents = intents
        self._proxy = proxy  # REST, the gateway's websocket and attachment downloads go through it
        self._shards: list[int] | None = settings.shard_ids  # sharded: the shards this replica runs
        self._client, self._tree = self._new_client()
        self._on_message: MessageHandler | None = None
        self._runner: asyncio.Task[None] | None = None
        self._online = False
        self._outbound = DiscordOutbound(lambda: self._client)
        self._http: aiohttp.ClientSession | None = None  # for attachment downloads; made on first use
        self.files = DiscordFiles(self._outbound, attachment_origins(settings.api_base), self._download_session)

    def _download_session(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(proxy=self._proxy)
        return self._http

    def _new_client(self) -> tuple[discord.Client, app_commands.CommandTree]:
        """A closed discord.Client cannot log in again, so every start (a watchdog restart too) gets a new one."""
        count = self._settings.shard_count
        kind: Callable[..., discord.Client] = (
            functools.partial(discord.AutoShardedClient, shard_count=count, shard_ids=list(self._shards or ()))
            if count is not None else discord.Client)
        client = kind(intents=self._intents, max_ratelimit_timeout=RATE_LIMIT_WAIT, allowed_mentions=NO_PINGS,
                      guild_ready_timeout=GUILD_READY_TIMEOUT, proxy=self._proxy, http_trace=fenced_trace(),
                      max_messages=None)  # no cache of the last 1 000 messages: replies carry their own
        tree = build_tree(client, self._command, self._choices, self._services.commands)
        client.add_dynamic_items(CommandButton)
        for event, handler in {"on_message": self._message, "on_command_button": self._button,
                               "on_ready": self._up, "on_resumed": self._up, "on_disconnect": self._down}.items():
            setattr(client, event, handler)
        return client, tree

    # ------------------------------------------------------------- lifecycle
    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        count, share = self._settings.shard_count, self._services.share
        if count is not None and self._settings.shard_ids is None and share is not None:
            await share(SHARDS, count, self._reshard)  # connects with this replica's first share
        else:
            await self._connect()
        if self._settings.sync_commands_on_start:
            await self._sync_global()

    async def _reshard(self, held: frozenset[int]) -> None:
        """This replica's shards changed (a replica came or went): reconnect with the new set."""
        self._shards = sorted(held)
        if self._runner is not None or self._client.is_ready() or self._online:
            await self._disconnect()  # a client never started cannot be closed (discord.py sets it up on login)
        await self._connect()
        log.info("discord: running shard(s) %s of %s", self._shards or "none", self._settings.shard_count)

    async def _connect(self) -> None:
        if self._client.is_closed():
            self._client, self._tree = self._new_client()
        if self._settings.shard_count is not None and not self._shards:
            await self._client.login(self._token)  # no shard here: REST only, for chats this replica answers
            self._online = True
            return
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

    async def _sync_global(self) -> None:
        """Opt-in (discord.sync_commands_on_start): a bulk overwrite is rate-limited, so not by default."""
        try:
            await self._tree.set_translator(ChineseDescriptions())
            synced = await guarded(self._tree.sync())
        except SendError as e:
            log.warning("discord: registering slash commands failed (%s); the bot runs without an update", e)
            return
        log.info("discord: registered %d global slash commands", len(synced))

    async def stop(self) -> None:
        await self._disconnect()
        if self._http is not None:
            await self._http.close()

    async def _disconnect(self) -> None:
        self._online = False
        await self._client.close()
        runner, self._runner = self._runner, None
        if runner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(runner, timeout=5.0)

    def connected(self) -> bool:
        if self._settings.shard_count is not None and not self._shards:
            return self._online  # no shard to run here: logged in for REST is all there is
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
        await self._deliver(parse_command(interaction, action))

    async def _acknowledge(self, interaction: discord.Interaction, *, thinking: bool) -> None:
        try:
            await interaction.response.defer(thinking=thinking)
        except (discord.HTTPException, discord.InteractionResponded) as e:  # e.g. redelivered: already acked
            log.warning("discord: could not acknowledge interaction %s: %s", interaction.id, e)
            return
        self._outbound.acknowledged(interaction)

    async def _choices(self, interaction: discord.Interaction) -> list[ConversationChoice]:
        """This chat's conversations for autocomplete (the hub checks the asker may see them)."""
        try:
            return await self._services.list_conversations(chat_of(interaction), str(interaction.user.id))
        except Exception:
            log.exception("discord: listing conversations for autocomplete failed")
            return []

    async def _deliver(self, incoming: InboundEvent) -> None:
        if self._on_message is None:
            return
        try:
            await self._on_message(incoming)
        except NotKept:  # the gateway never redelivers and has no ACK to withhold: logging is all there is
            log.error("discord: message %s in %s was not kept and is lost (Discord does not deliver it again)",
                      incoming.message_id, incoming.chat_id)
        except Exception:
            log.exception("discord: the hub failed on message %s", incoming.message_id)

    # -------------------------------------------------------------- outbound
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        return await self._outbound.send(chat, reply)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._outbound.edit(ref, reply)

    async def typing(self, chat: ChatRef) -> None:
        await self._outbound.typing(chat)


def _raise_start_failure(runner: asyncio.Task[None]) -> None:
    error = runner.exception() if not runner.cancelled() else None
    revoked = isinstance(error, discord.ConnectionClosed) and error.code == 4004  # gateway: "Authentication failed"
    if isinstance(error, discord.LoginFailure) or revoked:
        raise ConfigError("Discord rejected DISCORD_BOT_TOKEN; copy the token again from the Bot page "
                          "of the developer portal") from error
    if isinstance(error, discord.PrivilegedIntentsRequired):
        raise ConfigError("discord.message_content_intent is on, but the Message Content intent is not "
                          "enabled for this bot (developer portal → Bot → Privileged Gateway Intents)") from error
    if isinstance(error, aiohttp.ClientError | OSError | TimeoutError):
        raise ConnectionError(f"cannot reach Discord at {discord.http.Route.BASE}: {error}") from error
    raise SendFailed(f"discord gateway stopped during start-up: {error!r}") from error


def api_base(settings: DiscordConfig, env: Mapping[str, str]) -> str | None:
    return env.get("DISCORD_API_BASE") or settings.api_base


def discord_proxy(settings: DiscordConfig, env: Mapping[str, str]) -> str | None:
    """The proxy for Discord (its API and gateway are reached the same way), from the proxy variables."""
    return proxy_for(api_base(settings, env) or DISCORD_API, env)


async def doctor(settings: DiscordConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: does Discord accept the token?"""
    token = env.get("DISCORD_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("DISCORD_BOT_TOKEN is not set")
    return "token accepted, bot " + await check_token(token, api_base(settings, env), discord_proxy(settings, env))
