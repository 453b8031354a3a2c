"""Discord: discord.py's gateway client; slash commands and buttons arrive as interactions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.adapter import AdapterServices, AdapterSpec, CliCommand, PlatformConfig

if TYPE_CHECKING:
    from adapters.discord.adapter import DiscordAdapter


class DiscordConfig(PlatformConfig):
    api_base: str | None = None  # env DISCORD_API_BASE wins
    gateway_url: str | None = None  # env DISCORD_GATEWAY_URL wins
    message_content_intent: bool = False
    sync_commands_on_start: bool = False


def _create(section: DiscordConfig, env: Mapping[str, str], services: AdapterServices) -> DiscordAdapter:
    from adapters.discord.adapter import create  # discord.py takes a second to import: only when it runs

    return create(section, env, services)


async def _doctor(section: DiscordConfig, env: Mapping[str, str]) -> str:
    from adapters.discord.adapter import doctor

    return await doctor(section, env)


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
    create=_create,
    secrets=("DISCORD_BOT_TOKEN",),
    required_env=("DISCORD_BOT_TOKEN",),
    doctor=_doctor,
    commands=(CliCommand("discord-sync", "register Discord slash commands", _sync_arguments, _sync),),
    loggers=("discord",),
)
