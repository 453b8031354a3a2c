"""`sync_commands` registers the command tree: globally, or copied into one guild."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.discord.adapter import DiscordAdapter
from adapters.discord.commands import conversation_choices, sync_commands
from bot.adapter import ConversationChoice
from bot.commands import COMMANDS, menu
from bot.config import ConfigError
from tests.adapters.discord.conftest import Inbox
from tests.fakes.discord_api import APP_ID, GUILD_ID, TOKEN, FakeDiscord

REPO = Path(__file__).resolve().parents[3]
ALL_COMMANDS = sorted([*(n for n, c in COMMANDS.items() if not c.hidden), "ask"])  # every typed command: a slash form


async def test_global_sync_puts_every_command_with_english_and_chinese_descriptions(fake: FakeDiscord) -> None:
    names = (await sync_commands(TOKEN, menu(), fake.api_base)).names
    [put] = fake.calls_to("PUT", rf"/applications/{APP_ID}/commands")
    assert sorted(names) == sorted(c["name"] for c in put.body) == ALL_COMMANDS
    assert {"model", "lang", "memory", "forget", "roles", "approve", "deny", "pair"} <= set(names)
    model = next(c for c in put.body if c["name"] == "model")
    assert model["description"] == COMMANDS["model"].help[0]
    assert model["description_localizations"] == {"zh-CN": COMMANDS["model"].help[1],
                                                  "zh-TW": COMMANDS["model"].help[1]}
    assert (model["options"][0]["name"], model["options"][0]["required"]) == ("arguments", False)
    assert "options" not in next(c for c in put.body if c["name"] == "tree") or not next(
        c for c in put.body if c["name"] == "tree")["options"]
    switch = next(c for c in put.body if c["name"] == "switch")
    assert switch["options"][0]["autocomplete"] is True and switch["options"][0]["required"] is True
    new = next(c for c in put.body if c["name"] == "new")
    assert new["options"][0]["name"] == "role" and new["options"][0]["required"] is False
    goto = next(c for c in put.body if c["name"] == "goto")
    assert (goto["options"][0]["type"], goto["options"][0]["min_value"]) == (4, 1)
    options = {c["name"]: [(o["name"], o["type"], o.get("required", False), o.get("autocomplete", False))
                           for o in c.get("options", [])] for c in put.body}
    for name in ("switch", "delete", "archive", "unarchive"):
        assert options[name] == [("conversation", 3, True, True)]
    assert options["rename"] == [("title", 3, True, False)] and options["search"] == [("words", 3, True, False)]
    assert options["list"] == [("archived", 5, False, False), ("page", 4, False, False)]
    assert options["undo"] == []


async def test_guild_sync_copies_the_global_commands(fake: FakeDiscord) -> None:
    synced = await sync_commands(TOKEN, menu(), fake.api_base, guild_id=int(GUILD_ID))
    assert not fake.calls_to("PUT", rf"/applications/{APP_ID}/commands")
    [put] = fake.calls_to("PUT", rf"/applications/{APP_ID}/guilds/{GUILD_ID}/commands")
    assert sorted(c["name"] for c in put.body) == sorted(synced.names) == ALL_COMMANDS
    assert not synced.also_global


async def test_a_server_the_bot_is_not_in_is_one_clear_line(fake: FakeDiscord) -> None:
    """Issue 12 §7: discord-sync --guild before inviting the bot used to end in a raw Forbidden traceback."""
    with pytest.raises(ConfigError, match=r"server 123456789 \(403 Missing Access\): invite the bot to that server"):
        await sync_commands(TOKEN, menu(), fake.api_base, guild_id=123456789)


async def test_guild_and_global_commands_together_are_flagged_and_can_be_cleared(fake: FakeDiscord) -> None:
    await sync_commands(TOKEN, menu(), fake.api_base)
    assert (await sync_commands(TOKEN, menu(), fake.api_base, guild_id=int(GUILD_ID))).also_global  # listed twice
    cleared = await sync_commands(TOKEN, menu(), fake.api_base, guild_id=int(GUILD_ID), remove_global=True)
    assert not cleared.also_global and fake.registered[None] == []
    assert len(fake.registered[GUILD_ID]) == len(ALL_COMMANDS)


async def test_a_rejected_token_is_a_clear_error(fake: FakeDiscord) -> None:
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN"):
        await sync_commands("wrong-token", menu(), fake.api_base)
    assert not fake.calls_to("PUT", r"/applications/.*")


def test_autocomplete_choices_filter_and_cap_at_25() -> None:
    many = [ConversationChoice(f"{i:08x}", f"Topic {i}") for i in range(40)]
    assert len(conversation_choices(many, "")) == 25
    [only] = conversation_choices(many, "topic 37")
    assert (only.name, only.value) == ("Topic 37 · 00000025", "00000025")
    long_title = ConversationChoice("abcd1234", "x" * 150)
    [choice] = conversation_choices([long_title], "abcd")
    assert len(choice.name) <= 100 and choice.name.endswith("… · abcd1234")


async def test_sync_on_start_is_opt_in(make_adapter: Callable[..., DiscordAdapter], inbox: Inbox,
                                       fake: FakeDiscord) -> None:
    for sync_on_start in (False, True):
        running = make_adapter(sync_commands_on_start=sync_on_start)
        await running.start(inbox)
        await running.stop()
        assert len(fake.calls_to("PUT", rf"/applications/{APP_ID}/commands")) == int(sync_on_start)


async def test_a_token_the_gateway_refuses_closes_4004_and_is_a_clear_error(
        make_adapter: Callable[..., DiscordAdapter], inbox: Inbox, fake: FakeDiscord) -> None:
    fake.gateway_token = "revoked-after-login"  # REST still accepts it; the gateway's IDENTIFY does not
    running = make_adapter()
    with pytest.raises(ConfigError, match="Discord rejected DISCORD_BOT_TOKEN"):
        await running.start(inbox)
    await running.stop()
    assert fake.gateway_closes == [4004]


async def test_message_content_intent_not_enabled_closes_4014_and_is_a_clear_error(
        make_adapter: Callable[..., DiscordAdapter], inbox: Inbox, fake: FakeDiscord) -> None:
    fake.enabled_intents = 0  # the developer portal's Message Content switch is off
    running = make_adapter(message_content_intent=True)
    with pytest.raises(ConfigError, match="the Message Content intent is not enabled"):
        await running.start(inbox)
    await running.stop()
    assert fake.gateway_closes == [4014]
    assert fake.identify is not None and fake.identify["intents"] & (1 << 15)


async def test_by_default_no_privileged_intent_is_asked_for(
        make_adapter: Callable[..., DiscordAdapter], inbox: Inbox, fake: FakeDiscord) -> None:
    fake.enabled_intents = 0
    running = make_adapter()
    await running.start(inbox)
    assert running.connected() and fake.gateway_closes == []
    await running.stop()


async def test_discord_sync_command_says_what_to_do_in_one_line(fake: FakeDiscord, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "BOTHUB_"))}
    env |= {"DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": fake.api_base}

    async def sync(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "discord-sync", *args, cwd=tmp_path, env=env | {"PYTHONPATH": str(REPO)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode or 0, out.decode(), err.decode()

    code, _, err = await sync("--guild", "123456789")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "invite the bot to that server first" in err
    await sync()
    code, out, _ = await sync("--guild", GUILD_ID)
    assert code == 0 and "also registered globally, so this server lists each of them twice" in out
