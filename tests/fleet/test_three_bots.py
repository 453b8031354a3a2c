"""One `bothub run` with three Telegram bots (one fake Bot API, three tokens) bound to three agents: each bot
answers with its own agent's persona and model; conversations, memory and files stay apart even when the three
are in one group; each bot has its own menu."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.app import App
from bot.chats.folders import chat_folder
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import CODER_TOKEN, SUPPORT_TOKEN, by_model, env_for, seed, system_and_model
from tests.harness import running_app, wait_for

GROUP = -100777
BOB = {"id": 77, "is_bot": False, "first_name": "Bob"}


@pytest_asyncio.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, cloud: TelegramCloud) -> AsyncIterator[App]:
    env = env_for(cloud)
    await seed(tmp_path / "data", env)
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=env) as running:
        yield running


async def test_each_bot_answers_with_its_own_agents_persona_and_model(app: App, cloud: TelegramCloud,
                                                                       fake: FakeOpenAI) -> None:
    by_model(fake)
    default, support, coder = (cloud.bots[t] for t in (TOKEN, SUPPORT_TOKEN, CODER_TOKEN))
    for bot in (default, support, coder):
        bot.inject_message(42, "hello there")
    await wait_for(lambda: all(bot.bot_texts(42) for bot in (default, support, coder)), within=15)
    assert default.bot_texts(42) == ["[fake-model] ok"]
    assert support.bot_texts(42) == ["[helper-model] ok"]
    assert coder.bot_texts(42) == ["[coder-model] ok"]
    prompts = dict((model, system) for system, model in system_and_model(fake))
    assert "persona-helper" in prompts["helper-model"] and "persona-coder" not in prompts["helper-model"]
    assert "persona-coder" in prompts["coder-model"] and "persona-helper" not in prompts["coder-model"]
    assert "persona-" not in prompts["fake-model"]  # the default agent: today's workspace
    for bot in (default, support, coder):  # every bot publishes its own command menu
        assert bot.calls_of("setMyCommands")


async def test_three_bots_in_one_group_never_see_each_others_data(app: App, cloud: TelegramCloud,
                                                                   fake: FakeOpenAI) -> None:
    default, support, coder = (cloud.bots[t] for t in (TOKEN, SUPPORT_TOKEN, CODER_TOKEN))
    fake.script(ToolCalls([("m1", "remember", '{"content": "the launch code is 4242"}')]), Text("kept"))
    support.inject_message(GROUP, "@support_bot remember the launch code", from_user=BOB)
    await wait_for(lambda: "kept" in support.bot_texts(GROUP), within=15)
    fake.script(ToolCalls([("f1", "write_file", '{"filepath": "note.txt", "content": "coder only"}')]),
                Text("written"))
    coder.inject_message(GROUP, "@coder_bot write a note", from_user=BOB)
    await wait_for(lambda: "written" in coder.bot_texts(GROUP), within=15)
    default.inject_message(GROUP, "@hub_test_bot what do you remember?", from_user=BOB)
    await wait_for(lambda: len(default.bot_texts(GROUP)) == 1, within=15)
    support.inject_message(GROUP, "@support_bot and you?", from_user=BOB)
    await wait_for(lambda: len(support.bot_texts(GROUP)) == 2, within=15)
    systems = [system for system, _ in system_and_model(fake)]
    assert "4242" not in systems[-2]  # the default bot's prompt: not the support bot's memory
    assert "4242" in systems[-1]  # the support bot's own memory, in its next prompt
    data = app.cfg.data_dir
    assert (chat_folder(data, f"telegram@coder:{GROUP}") / "note.txt").read_text() == "coder only"
    for other in (f"telegram:{GROUP}", f"telegram@support:{GROUP}"):
        assert not (chat_folder(data, other) / "note.txt").exists()
    for key in (f"telegram:{GROUP}", f"telegram@support:{GROUP}", f"telegram@coder:{GROUP}"):
        assert len(await app.store.conversations.recent(key, limit=10)) == 1  # each bot's own conversation
    coder.inject_message(GROUP, "/list", from_user=BOB)
    await wait_for(lambda: len(coder.bot_texts(GROUP)) == 2, within=15)
    listing = coder.bot_texts(GROUP)[-1]
    assert "write a note" in listing and "launch code" not in listing and "remember" not in listing


async def test_an_edit_to_an_agents_workspace_takes_effect_on_new(app: App, cloud: TelegramCloud,
                                                                  fake: FakeOpenAI) -> None:
    by_model(fake)
    support = cloud.bots[SUPPORT_TOKEN]
    support.inject_message(42, "first")
    await wait_for(lambda: len(support.bot_texts(42)) == 1, within=15)
    soul = app.cfg.data_dir / "ws" / "helper" / "SOUL.md"
    soul.write_text("You are Helper, second edition. persona-helper-v2\n", encoding="utf-8")
    support.inject_message(42, "/new")
    await wait_for(lambda: len(support.bot_texts(42)) == 2, within=15)
    support.inject_message(42, "second")
    await wait_for(lambda: len(support.bot_texts(42)) == 3, within=15)
    systems = [system for system, model in system_and_model(fake) if model == "helper-model"]
    assert "persona-helper-v2" not in systems[0] and "persona-helper-v2" in systems[-1]
    assert "persona-helper-v2" not in (app.hub.runner.assembly.prompts.workspace / "SOUL.md").read_text()


async def test_a_disabled_bot_finishes_its_running_answer_then_stops(app: App, cloud: TelegramCloud,
                                                                      fake: FakeOpenAI) -> None:
    support = cloud.bots[SUPPORT_TOKEN]
    answer = " ".join(f"w{n}" for n in range(30))
    fake.script(Text(answer, delay=0.05))
    support.inject_message(42, "a long one please")
    await wait_for(lambda: bool(support.calls_of("sendMessage")), within=15)  # streaming has begun
    identity = (await app.fleet.load()).identities["support"]
    await app.fleet.put_identity(identity.model_copy(update={"enabled": False, "credentials": {}}), "test")
    app.fleet_watch.poke()
    await wait_for(lambda: "support" not in app.bots.running, within=10)
    assert support.bot_texts(42) == [answer]  # finished before the bot stopped
    assert app.hub.delivery("telegram@support") is None and app.hub.delivery("telegram") is not None
