"""The slash command tree, the persistent command button, and `sync_commands` for `bothub discord-sync`.

Every command is turned into its command text ("/switch a1b2c3d4"; /ask into the bare prompt) and
handed to one handler, so slash commands, typed commands and buttons share the hub's single path.
Registering with Discord (a bulk overwrite) is an explicit step, never an automatic one per start.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import discord
import yarl
from discord import app_commands

from bot.adapter import ConversationChoice, MenuCommand
from bot.config import ConfigError

log = logging.getLogger(__name__)

CommandHandler = Callable[[discord.Interaction, str], Coroutine[Any, Any, None]]
ConversationSource = Callable[[discord.Interaction], Coroutine[Any, Any, list[ConversationChoice]]]
MAX_CHOICES = 25  # Discord's limit for autocomplete answers
BUTTON_EVENT = "command_button"  # client event `on_command_button(interaction, action)`

# Commands that take one of the chat's conversations: an autocompleted option; /unarchive offers archived ones.
_ON_CONVERSATION = {"switch": None, "delete": None, "archive": False, "unarchive": True}
# options of their own: a role, a conversation, a node number, a title, search words, the archive switch
_TYPED = {"new", "goto", "rename", "search", "list", *_ON_CONVERSATION}
_NAME = re.compile(r"[-_a-z0-9]{1,32}")
MAX_DESCRIPTION = 100
ASK = MenuCommand("ask", "Talk to the bot without mentioning it", "无需提及即可与机器人对话", "/ask <prompt>")


class ChineseDescriptions(app_commands.Translator):
    """Descriptions carry their Chinese text; Discord shows it to zh-CN and zh-TW clients."""

    async def translate(self, string: app_commands.locale_str, locale: discord.Locale,
                        context: app_commands.TranslationContextTypes) -> str | None:
        if locale in (discord.Locale.chinese, discord.Locale.taiwan_chinese):
            zh = string.extras.get("zh")
            return str(zh)[:MAX_DESCRIPTION] if zh else None
        return None


def _describe(entry: MenuCommand) -> app_commands.locale_str:
    return app_commands.locale_str(entry.en[:MAX_DESCRIPTION], zh=entry.zh)


class CommandButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=r"(?s)/.+"):
    """A button whose custom_id is command text. Matched by pattern, so presses on messages sent before
    a restart still work, and no per-message view is kept in memory."""

    def __init__(self, button: discord.ui.Button[discord.ui.View]) -> None:
        super().__init__(button)

    @classmethod
    def make(cls, label: str, action: str, row: int) -> CommandButton:
        return cls(discord.ui.Button(label=label[:80], custom_id=action, style=discord.ButtonStyle.secondary,
                                     row=row))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[discord.ui.View], match: object, /
    ) -> CommandButton:
        assert isinstance(item, discord.ui.Button)
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        interaction.client.dispatch(BUTTON_EVENT, interaction, self.item.custom_id)


def build_tree(client: discord.Client, on_command: CommandHandler, conversations: ConversationSource,
               menu: tuple[MenuCommand, ...]) -> app_commands.CommandTree:
    """One slash command per chat command of the core registry (plus /ask); the same tree serves the
    gateway and `sync_commands`, so a new command appears with no change here."""
    tree = app_commands.CommandTree(client)
    entries = {entry.name: entry for entry in menu if _NAME.fullmatch(entry.name)}
    for entry in entries.values():
        if entry.name not in _TYPED:
            tree.add_command(_generic(entry, on_command))
    for name, archived in _ON_CONVERSATION.items():
        if name in entries:
            tree.add_command(_on_conversation(entries[name], on_command, conversations, archived))

    if "new" in entries:
        @tree.command(name="new", description=_describe(entries["new"]))
        @app_commands.describe(role="Role name from the workspace roles folder")
        async def new(interaction: discord.Interaction, role: str | None = None) -> None:
            await on_command(interaction, f"/new {role}" if role else "/new")

    if "list" in entries:
        @tree.command(name="list", description=_describe(entries["list"]))
        @app_commands.describe(archived="Show archived conversations too", page="Page number")
        async def list_(interaction: discord.Interaction, archived: bool = False,
                        page: app_commands.Range[int, 1] | None = None) -> None:
            words = ["/list", *(["all"] if archived else []), *([str(page)] if page else [])]
            await on_command(interaction, " ".join(words))

    if "rename" in entries:
        @tree.command(name="rename", description=_describe(entries["rename"]))
        @app_commands.describe(title="The new title (at most 60 characters)")
        async def rename(interaction: discord.Interaction, title: app_commands.Range[str, 1, 100]) -> None:
            await on_command(interaction, f"/rename {title}")

    if "search" in entries:
        @tree.command(name="search", description=_describe(entries["search"]))
        @app_commands.describe(words="Words every matching message contains")
        async def search(interaction: discord.Interaction, words: str) -> None:
            await on_command(interaction, f"/search {words}")

    if "goto" in entries:
        @tree.command(name="goto", description=_describe(entries["goto"]))
        @app_commands.describe(n="Message number shown by /tree")
        async def goto(interaction: discord.Interaction, n: app_commands.Range[int, 1]) -> None:
            await on_command(interaction, f"/goto {n}")

    @tree.command(name="ask", description=_describe(ASK))
    @app_commands.describe(prompt="What to say")
    async def ask(interaction: discord.Interaction, prompt: str) -> None:
        await on_command(interaction, prompt)

    return tree


def _generic(entry: MenuCommand, on_command: CommandHandler) -> app_commands.Command[Any, ..., None]:
    """A command with no typed options: its arguments, if it takes any, as one optional text option."""
    if not entry.takes_arguments:
        async def plain(interaction: discord.Interaction) -> None:
            await on_command(interaction, f"/{entry.name}")

        return app_commands.Command(name=entry.name, description=_describe(entry), callback=plain)

    @app_commands.describe(arguments=entry.usage[:MAX_DESCRIPTION])
    async def with_arguments(interaction: discord.Interaction, arguments: str | None = None) -> None:
        await on_command(interaction, f"/{entry.name} {arguments}" if arguments else f"/{entry.name}")

    return app_commands.Command(name=entry.name, description=_describe(entry), callback=with_arguments)


def _on_conversation(entry: MenuCommand, on_command: CommandHandler, conversations: ConversationSource,
                     archived: bool | None) -> app_commands.Command[Any, ..., None]:
    """/switch, /delete, /archive, /unarchive: one required conversation, autocompleted from this chat's own."""
    async def choose(interaction: discord.Interaction, typed: str) -> list[app_commands.Choice[str]]:
        return conversation_choices(await conversations(interaction), typed, archived)

    @app_commands.describe(conversation="Conversation title or id")
    @app_commands.autocomplete(conversation=choose)
    async def run(interaction: discord.Interaction, conversation: str) -> None:
        await on_command(interaction, f"/{entry.name} {conversation}")

    return app_commands.Command(name=entry.name, description=_describe(entry), callback=run)


def conversation_choices(conversations: list[ConversationChoice], typed: str,
                         archived: bool | None = None) -> list[app_commands.Choice[str]]:
    """Autocomplete: title and short id, filtered by what was typed (and archived or not when given), at most 25."""
    needle = typed.strip().lower()
    matches = [c for c in conversations if (needle in c.title.lower() or c.id.lower().startswith(needle))
               and archived in (None, c.archived)]
    return [app_commands.Choice(name=_choice_label(c), value=c.id) for c in matches[:MAX_CHOICES]]


def _choice_label(conversation: ConversationChoice) -> str:
    suffix = f" · {conversation.id}"
    title = ("📦 " if conversation.archived else "") + (conversation.title.strip() or "(untitled)")
    return (title[: 100 - len(suffix) - 1] + "…" if len(title) + len(suffix) > 100 else title) + suffix


def configure_endpoints(api_base: str | None, gateway_url: str | None = None) -> None:
    """Point discord.py at another REST base / gateway (tests, proxies). These are class attributes in
    discord.py, so the setting is process-wide, which is fine for one bot per process."""
    if api_base:
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


@dataclass(frozen=True)
class Synced:
    names: list[str]  # what Discord accepted
    also_global: bool = False  # a guild sync while global commands exist: that server lists each one twice


async def sync_commands(token: str, menu: tuple[MenuCommand, ...], api_base: str | None = None,
                        guild_id: int | None = None, remove_global: bool = False, proxy: str | None = None) -> Synced:
    """Register the commands with Discord: globally (may take a while to appear), or in one guild
    (instant; the global commands are copied there), optionally removing the global ones."""
    configure_endpoints(api_base)
    client = discord.Client(intents=discord.Intents(guilds=True), proxy=proxy)  # REST only; guilds: no warning
    tree = build_tree(client, _sync_only, _no_choices, menu)
    await tree.set_translator(ChineseDescriptions())
    guild = discord.Object(guild_id) if guild_id else None
    try:
        await client.login(token)
        if guild is not None:
            tree.copy_global_to(guild=guild)
        synced = await tree.sync(guild=guild)
        if guild is not None and remove_global:
            tree.clear_commands(guild=None)
            await tree.sync()
        also_global = guild is not None and bool(await tree.fetch_commands())
    except discord.LoginFailure as e:
        raise ConfigError("Discord rejected DISCORD_BOT_TOKEN; copy the token again from the Bot page "
                          "of the developer portal") from e
    except discord.Forbidden as e:  # 50001 Missing Access: the bot is not in that server
        raise ConfigError(f"Discord refused the commands for server {guild_id} ({e.status} {e.text}): invite the "
                          "bot to that server first (OAuth2 → URL Generator, scope `bot`), then sync again") from e
    finally:
        await client.close()
    return Synced([command.name for command in synced], also_global)


async def _sync_only(interaction: discord.Interaction, text: str) -> None:
    """The sync client never connects to the gateway, so no command can reach it."""
    log.warning("discord command %r reached the sync-only client; ignored", text)


async def _no_choices(interaction: discord.Interaction) -> list[ConversationChoice]:
    return []


async def check_token(token: str, api_base: str | None = None, proxy: str | None = None) -> str:
    """For `bothub doctor`: does Discord accept the token? Returns the bot's name."""
    configure_endpoints(api_base)
    client = discord.Client(intents=discord.Intents.none(), proxy=proxy)
    try:
        await client.login(token)
        user = client.user
        return f"{user.name} ({user.id})" if user is not None else "token accepted"
    except discord.LoginFailure as e:
        raise ConfigError("Discord rejected DISCORD_BOT_TOKEN") from e
    finally:
        await client.close()
