"""Mid-stream failover on real platform adapters (issue 31 §2): the primary model's connection is reset after
part of the answer was shown; the next link of the chain continues that answer in the same platform message.
One message, the whole answer, both models on the node's trace and in /tree — on Telegram, Discord and Feishu."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from bot.chats.sessions import SessionKey
from tests.core import test_failover_hub as hub_flow
from tests.e2e import test_discord_e2e as discord_flow
from tests.e2e import test_feishu_e2e as feishu_flow
from tests.fakes.discord_api import DM_CHANNEL_ID, FakeDiscord
from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.openai_api import FakeOpenAI, Reset, Text
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import running_app, wait_for

discord_fake = discord_flow.discord_fake
feishu_fake = feishu_flow.feishu_fake
backup = hub_flow.backup  # the spare model's fake
chained = hub_flow.chained

FIRST, REST = "The first half of the answer, ", "and the second half from the spare model."
WHOLE = FIRST + REST
MODELS = "main/fake-model ✗ → spare/spare-model"


def script(fake: FakeOpenAI, spare: FakeOpenAI) -> None:
    fake.script(Reset(FIRST))
    spare.script(Text(REST, first_token_delay=1.5))  # the part shown reaches the platform before the rest


async def both_models_on_the_node(app: App, key: SessionKey) -> None:
    await app.hub.idle()  # the run ends after its final edit: then its trace is handed over
    await app.traces.drain()
    node = app.lanes.session(key).path[-1]
    assert node.content == WHOLE
    trace = await app.store.traces.get(key.storage_key, node.trace_id or "")
    assert trace is not None and trace.outcome == "ok"
    assert [(s.name, s.outcome) for s in trace.steps] == [("main/fake-model", "error"), ("spare/spare-model", "ok")]


@contextlib.asynccontextmanager
async def chained_app(tmp_path: Path, fake: FakeOpenAI, spare: FakeOpenAI, platform: str,
                      platform_env: dict[str, str]) -> AsyncIterator[App]:
    """The app on one platform, its chain the primary fake then the spare."""
    config, env = chained(fake, spare)
    async with running_app(tmp_path, fake.base_url, (platform,), config=config,
                           env={**env, **platform_env}) as running:
        yield running


@pytest.fixture
async def telegram_app(tmp_path: Path, fake: FakeOpenAI, backup: FakeOpenAI, tg: FakeTelegram
                       ) -> AsyncIterator[App]:
    async with chained_app(tmp_path, fake, backup, "telegram", tg.env) as running:
        yield running


async def test_telegram_a_reset_mid_answer_is_continued_in_the_same_draft(
        telegram_app: App, tg: FakeTelegram, fake: FakeOpenAI, backup: FakeOpenAI) -> None:
    script(fake, backup)
    tg.inject_message(42, "tell me both halves")
    await wait_for(lambda: tg.bot_texts(42) == [WHOLE], within=15)
    [draft] = tg.drafts_in(42)  # a private chat streams in one draft…
    assert draft.texts[0] == FIRST.strip()  # …shown before the primary died
    [sent] = tg.calls_of("sendMessage")  # then the whole answer, the spare's part continuing it, in one message
    assert sent["text"] == WHOLE and draft.became == tg.messages(42)[-1].message_id
    handed = backup.requests[0]["body"]["messages"]
    assert handed[-2] == {"role": "assistant", "content": FIRST}  # the part shown, handed over as context
    await both_models_on_the_node(telegram_app, SessionKey("telegram", "42"))
    tg.inject_message(42, "/tree")
    await wait_for(lambda: any(MODELS in text for text in tg.bot_texts(42)), within=10)


@pytest.fixture
async def discord_app(tmp_path: Path, fake: FakeOpenAI, backup: FakeOpenAI, discord_fake: FakeDiscord
                      ) -> AsyncIterator[App]:
    async with chained_app(tmp_path, fake, backup, "discord", discord_flow.discord_env(discord_fake)) as running:
        yield running


async def test_discord_a_reset_mid_answer_is_continued_in_the_same_message(
        discord_app: App, discord_fake: FakeDiscord, fake: FakeOpenAI, backup: FakeOpenAI) -> None:
    script(fake, backup)

    def shown() -> list[str]:
        return [m["content"] for m in discord_fake.messages.values() if m["channel_id"] == DM_CHANNEL_ID]

    await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.user_message("tell me both halves", dm=True))
    await wait_for(lambda: shown() == [WHOLE], within=15)
    [sent] = discord_fake.calls_to("POST", rf"/channels/{DM_CHANNEL_ID}/messages")
    assert sent.body["content"].rstrip() == FIRST.rstrip()
    assert discord_fake.calls_to("PATCH", rf"/channels/{DM_CHANNEL_ID}/messages/.*")
    await both_models_on_the_node(discord_app, SessionKey("discord", DM_CHANNEL_ID))
    await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.user_message("/tree", dm=True))
    await wait_for(lambda: any(MODELS in text for text in shown()), within=10)


async def test_feishu_a_reset_mid_answer_is_continued_in_the_same_card(
        tmp_path: Path, fake: FakeOpenAI, backup: FakeOpenAI, feishu_fake: FakeFeishu) -> None:
    script(fake, backup)
    config, env = chained(fake, backup)
    config = {**config, "server": {"port": 0}, "feishu": {"transport": "webhook"}}
    async with running_app(tmp_path, fake.base_url, ("feishu",), config=config,
                           env={**env, **feishu_flow.feishu_env(feishu_fake)}) as app:
        event = feishu_fake.incoming("ev-mid", chat_type="p2p", chat_id="oc_mid", message_type="text",
                                     content={"text": "tell me both halves"}, token=feishu_flow.VERIFICATION_TOKEN)
        await feishu_flow.push(app, event)
        await wait_for(lambda: feishu_fake.shown("oc_mid") == [WHOLE], within=15)  # one message, the whole answer
        await both_models_on_the_node(app, SessionKey("feishu", "oc_mid"))
