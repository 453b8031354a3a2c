"""Discord: discord.py's gateway client; slash commands and buttons arrive as interactions."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping

from pydantic import Field, model_validator

from bot.adapter import AdapterSpec, CliCommand, MenuCommand, PlatformConfig, imported


def _not_voice(record: logging.LogRecord) -> bool:
    """discord.py warns at every client start that voice is unsupported: true, and nothing to act on here."""
    return "voice will NOT be supported" not in record.getMessage()


logging.getLogger("discord.client").addFilter(_not_voice)


class DiscordConfig(PlatformConfig):
    api_base: str | None = None  # env DISCORD_API_BASE wins
    gateway_url: str | None = None  # env DISCORD_GATEWAY_URL wins
    message_content_intent: bool = False
    sync_commands_on_start: bool = False
    # gateway sharding: with shard_count alone, replicas share the shards through the database; shard_ids
    # pins this replica's shards instead
    shard_count: int | None = Field(default=None, ge=1)
    shard_ids: list[int] | None = None

    @model_validator(mode="after")
    def _shards_in_range(self) -> DiscordConfig:
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ValueError("discord.shard_ids needs discord.shard_count")
            if not self.shard_ids or any(not 0 <= i < self.shard_count for i in self.shard_ids):
                raise ValueError(f"discord.shard_ids must be shard numbers from 0 to {self.shard_count - 1}")
        return self


def _sync_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--guild", metavar="ID", help="sync to one server (instant) instead of globally; the bot "
                        "must be in it (Developer Mode → right-click the server → Copy Server ID)")
    parser.add_argument("--remove-global", action="store_true", help="with --guild: also remove the global "
                        "commands, so that server does not list every command twice")


async def _sync(section: DiscordConfig, env: Mapping[str, str], args: argparse.Namespace,
                menu: tuple[MenuCommand, ...]) -> int:
    """`bothub discord-sync [--guild ID]`: register every chat command (`menu`, from core) as a slash command."""
    from adapters.discord.adapter import api_base, discord_proxy
    from adapters.discord.commands import sync_commands

    token = env.get("DISCORD_BOT_TOKEN")
    if not token:
        print("bothub: set DISCORD_BOT_TOKEN first", file=sys.stderr)
        return 2
    if args.guild is not None and not str(args.guild).isdigit():
        print("bothub: --guild takes the server's numeric id (Developer Mode → right-click → Copy ID)",
              file=sys.stderr)
        return 2
    if args.remove_global and args.guild is None:
        print("bothub: --remove-global goes with --guild", file=sys.stderr)
        return 2
    synced = await sync_commands(token, menu, api_base(section, env), int(args.guild) if args.guild else None,
                                 args.remove_global, discord_proxy(section, env))
    print(f"synced {len(synced.names)} commands: {', '.join(synced.names)}")
    if synced.also_global:
        print("note: the commands are also registered globally, so this server lists each of them twice; "
              "run again with --remove-global to keep only this server's (DMs need the global ones)")
    elif args.guild:
        print("note: guild commands exist only in that server, not in DMs with the bot")
    return 0


SPEC = AdapterSpec(
    name="discord",
    config_model=DiscordConfig,
    create=imported("adapters.discord.adapter", "create"),  # discord.py is imported only when it runs
    secrets=("DISCORD_BOT_TOKEN",),
    required_env=("DISCORD_BOT_TOKEN",),
    doctor=imported("adapters.discord.adapter", "doctor"),
    commands=(CliCommand("discord-sync", "register Discord slash commands", _sync_arguments, _sync),),
    loggers=("discord",),
    first_steps=("Discord: discord.com/developers → New Application → Bot → Reset Token (turn on "
                 "Message Content Intent)",
                 "Discord：discord.com/developers → New Application → Bot → Reset Token（打开 "
                 "Message Content Intent）"),
)
