"""The Discord spec in-process: its config refuses shard settings that cannot work, `discord-sync` refuses wrong
arguments in one line each and tells what the sync did, and discord.py's voice warning is filtered out."""

from __future__ import annotations

import argparse
import logging

import pytest
from pydantic import ValidationError

from adapters.discord import DiscordConfig, _not_voice, _sync
from bot.commands import menu
from tests.fakes.discord_api import GUILD_ID, TOKEN, FakeDiscord


@pytest.mark.parametrize(("settings", "error"), [
    ({"shard_ids": [0]}, "discord.shard_ids needs discord.shard_count"),
    ({"shard_count": 2, "shard_ids": []}, "shard numbers from 0 to 1"),
    ({"shard_count": 2, "shard_ids": [2]}, "shard numbers from 0 to 1"),
])
def test_shard_settings_that_cannot_work_are_refused(settings: dict[str, object], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        DiscordConfig.model_validate(settings)
    assert DiscordConfig.model_validate({"shard_count": 2, "shard_ids": [1]}).shard_ids == [1]


def args(guild: str | None = None, remove_global: bool = False) -> argparse.Namespace:
    return argparse.Namespace(guild=guild, remove_global=remove_global)


@pytest.mark.parametrize(("env", "given", "error"), [
    ({}, args(), "set DISCORD_BOT_TOKEN first"),
    ({"DISCORD_BOT_TOKEN": TOKEN}, args("my-server"), "--guild takes the server's numeric id"),
    ({"DISCORD_BOT_TOKEN": TOKEN}, args(remove_global=True), "--remove-global goes with --guild"),
])
async def test_discord_sync_refuses_wrong_arguments_in_one_line(
        env: dict[str, str], given: argparse.Namespace, error: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await _sync(DiscordConfig(), env, given, menu()) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bothub: {error}") and len(err.strip().splitlines()) == 1


async def test_discord_sync_to_one_server_says_so(fake: FakeDiscord, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": fake.api_base}
    assert await _sync(DiscordConfig(), env, args(GUILD_ID, remove_global=True), menu()) == 0
    out = capsys.readouterr().out
    assert out.startswith("synced ") and "guild commands exist only in that server, not in DMs" in out


def test_the_voice_warning_is_filtered_and_nothing_else() -> None:
    def record(text: str) -> logging.LogRecord:
        return logging.LogRecord("discord.client", logging.WARNING, __file__, 1, text, None, None)

    assert not _not_voice(record("PyNaCl is not installed, voice will NOT be supported"))
    assert _not_voice(record("gateway closed"))
