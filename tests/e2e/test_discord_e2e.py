"""The whole app (store, agent, hub) with the real discord.py adapter, the fake Discord and the fake LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest

from adapters.discord import adapter as adapter_module
from bot.app import App
from bot.chats.sessions import SessionKey
from tests.fakes.discord_api import (
    APP_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    THREAD2_ID,
    THREAD_ID,
    TOKEN,
    FakeDiscord,
)
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import running_app, wait_for


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY",
                        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    monkeypatch.setattr(adapter_module, "GUILD_READY_TIMEOUT", 0.05)
    yield server
    await server.stop()


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, discord_fake: FakeDiscord) -> AsyncIterator[App]:
    async with running_app(tmp_path, fake.base_url, ("discord",), env=discord_env(discord_fake)) as running:
        yield running


def discord_env(server: FakeDiscord) -> dict[str, str]:
    return {"DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": server.api_base, "DISCORD_GATEWAY_URL": server.gateway_url}


def _shown(server: FakeDiscord, channel_id: str) -> list[str]:
    return [m["content"] for m in server.messages.values() if m["channel_id"] == channel_id]


def _last_prompt(llm: FakeOpenAI) -> str:
    return "\n".join(str(m.get("content")) for m in llm.requests[-1]["body"]["messages"] if m["role"] != "system")


async def _mention(server: FakeDiscord, text: str, channel_id: str = CHANNEL_ID) -> dict:
    payload = server.user_message(f"<@{APP_ID}> {text}", channel_id=channel_id, mentions=(BOT_USER,))
    await server.dispatch("MESSAGE_CREATE", payload)
    return payload


async def _answered(server: FakeDiscord, channel_id: str, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in _shown(server, channel_id)))


async def test_slash_new_is_deferred_then_answered(app: App, discord_fake: FakeDiscord) -> None:
    payload = discord_fake.slash("new")
    await discord_fake.dispatch("INTERACTION_CREATE", payload)
    await wait_for(lambda: bool(discord_fake.calls_to("PATCH", rf"/webhooks/{APP_ID}/{payload['token']}/.*")))
    [ack] = discord_fake.calls_to("POST", rf"/interactions/{payload['id']}/{payload['token']}/callback")
    assert ack.body["type"] == 5
    assert discord_fake.calls.index(ack) < discord_fake.calls.index(discord_fake.calls_to("PATCH", r"/webhooks/.*")[0])
    [answer] = _shown(discord_fake, CHANNEL_ID)
    assert answer and "thinking" not in answer.lower()


async def test_tree_button_moves_the_cursor_and_the_next_answer_branches(
        app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    # [1] first, [2] its answer, [3] second, [4] its answer; then /goto 2 and [5] third, [6] its answer
    for question in ("first question", "second question"):
        await _mention(discord_fake, question)
        await _answered(discord_fake, CHANNEL_ID, question)
    goto = discord_fake.slash("goto", {"n": 2})
    await discord_fake.dispatch("INTERACTION_CREATE", goto)
    await wait_for(lambda: bool(discord_fake.calls_to("PATCH", rf"/webhooks/{APP_ID}/{goto['token']}/.*")))
    await _mention(discord_fake, "third question")
    await _answered(discord_fake, CHANNEL_ID, "third question")
    assert "second question" not in _last_prompt(fake)

    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.slash("tree"))
    await wait_for(lambda: any(m["components"] for m in discord_fake.messages.values()))
    tree = dict(next(m for m in discord_fake.messages.values() if m["components"]))  # a snapshot
    actions = [b["custom_id"] for row in tree["components"] for b in row["components"]]
    assert "/goto 2" in actions and "/goto 4" in actions  # the branch point and the other leaf

    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.button_press(tree["id"], "/goto 4"))
    await wait_for(lambda: discord_fake.messages[tree["id"]]["content"] != tree["content"])
    assert "second question" in discord_fake.messages[tree["id"]]["content"]  # the tree message, updated in place

    await _mention(discord_fake, "fourth question")
    await _answered(discord_fake, CHANNEL_ID, "fourth question")
    prompt = _last_prompt(fake)
    assert "first question" in prompt and "second question" in prompt
    assert "third question" not in prompt  # continued on the other branch, chosen with the button


async def test_two_threads_are_two_sessions(app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    await _mention(discord_fake, "the secret word is pineapple", channel_id=THREAD_ID)
    await _answered(discord_fake, THREAD_ID, "pineapple")
    await _mention(discord_fake, "what is the secret word?", channel_id=THREAD2_ID)
    await _answered(discord_fake, THREAD2_ID, "secret word?")
    assert "pineapple" not in _last_prompt(fake)
    assert not _shown(discord_fake, CHANNEL_ID)  # replies stayed inside their threads


async def test_direct_message_flow(app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    fake.script(Text("hello from a DM", first_token_delay=1.0))
    await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.user_message("hello from a DM", dm=True))
    await _answered(discord_fake, DM_CHANNEL_ID, "hello from a DM")
    assert discord_fake.calls_to("POST", rf"/channels/{DM_CHANNEL_ID}/typing")  # the model was silent for a second
    await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.user_message("/status", dm=True))
    await wait_for(lambda: len(_shown(discord_fake, DM_CHANNEL_ID)) == 2)
    session = app.lanes.session(SessionKey("discord", DM_CHANNEL_ID))
    assert _shown(discord_fake, DM_CHANNEL_ID)[-1] == (
        f"Conversation `{session.conversation_id}` (hello from a DM)\nModel: fake-model\nMessages: 2\n"
        "Cursor: [2] (see /tree)\nRole: default")


async def test_redelivered_events_are_answered_once(app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    payload = discord_fake.user_message("only once, please", dm=True)
    await discord_fake.dispatch("MESSAGE_CREATE", payload)
    await discord_fake.dispatch("MESSAGE_CREATE", payload)
    await _answered(discord_fake, DM_CHANNEL_ID, "only once, please")
    slash = discord_fake.slash("roles")
    await discord_fake.dispatch("INTERACTION_CREATE", slash)
    await discord_fake.dispatch("INTERACTION_CREATE", slash)
    await wait_for(lambda: len(_shown(discord_fake, CHANNEL_ID)) == 1)
    await _mention(discord_fake, "marker")  # everything before it has been handled once it is answered
    await _answered(discord_fake, CHANNEL_ID, "marker")
    assert len(fake.requests) == 2
    assert len(_shown(discord_fake, DM_CHANNEL_ID)) == 1
    assert len(_shown(discord_fake, CHANNEL_ID)) == 2


async def test_switch_shows_archive_and_delete_buttons_and_delete_offers_undo(
        app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    await _mention(discord_fake, "notes about the garden")
    await _answered(discord_fake, CHANNEL_ID, "notes about the garden")
    garden = app.lanes.session(SessionKey("discord", CHANNEL_ID)).conversation_id
    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.slash("new"))
    await _answered(discord_fake, CHANNEL_ID, "New conversation")
    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.slash("switch", {"conversation": garden}))
    await wait_for(lambda: any(m["components"] for m in discord_fake.messages.values()))
    switched = dict(next(m for m in discord_fake.messages.values() if m["components"]))
    assert [[(b["label"], b["custom_id"]) for b in row["components"]] for row in switched["components"]] == [
        [("📦 Archive", f"/archive {garden}"), ("🗑 Delete", f"/delete {garden}")]]

    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.button_press(switched["id"], f"/delete {garden}"))
    await wait_for(lambda: "Deleted conversation" in discord_fake.messages[switched["id"]]["content"])
    undo = discord_fake.messages[switched["id"]]["components"]  # the pressed message, replaced
    assert [[b["custom_id"] for b in row["components"]] for row in undo] == [["/undo"]]
    listing = discord_fake.slash("list", {"archived": True})
    await discord_fake.dispatch("INTERACTION_CREATE", listing)
    await _answered(discord_fake, CHANNEL_ID, "All conversations (1)")
    assert garden not in _shown(discord_fake, CHANNEL_ID)[-1]

    await discord_fake.dispatch("INTERACTION_CREATE", discord_fake.button_press(switched["id"], "/undo"))
    await wait_for(lambda: "Restored conversation" in discord_fake.messages[switched["id"]]["content"])
    assert app.lanes.session(SessionKey("discord", CHANNEL_ID)).conversation_id == garden
