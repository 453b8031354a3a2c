"""Discord: discord.py's gateway client; slash commands and buttons arrive as interactions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from bot.adapter import AdapterSpec, CliCommand, PlatformConfig, imported


class DiscordConfig(PlatformConfig):
    api_base: str | None = None  # env DISCORD_API_BASE wins
    gateway_url: str | None = None  # env DISCORD_GATEWAY_URL wins
    message_content_intent: bool = False
    sync_commands_on_start: bool = False


def _sync_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--guild", help="sync to one guild (instant) instead of globally")


async def _sync(section: DiscordConfig, env: Mapping[str, str], args: argparse.Namespace) -> int:
    """`bothub discord-sync [--guild ID]`: register the slash commands with Discord."""
    from adapters.discord.adapter import api_base
    from adapters.discord.commands import sync_commands

    token = env.get("DISCORD_BOT_TOKEN")
    if not token:
        print("bothub: set DISCORD_BOT_TOKEN first", file=sys.stderr)
        return 2
    if args.guild is not None and not str(args.guild).isdigit():
        print("bothub: --guild takes the server's numeric id (Developer Mode → right-click → Copy ID)",
              file=sys.stderr)
        return 2
    names = await sync_commands(token, api_base(section, env), int(args.guild) if args.guild else None)
    print(f"synced {len(names)} commands: {', '.join(names)}")
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
)
