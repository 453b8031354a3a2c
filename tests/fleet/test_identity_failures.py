"""A bot account stored while the hub runs whose platform refuses its token: it does not start, the reason is kept
for the dashboard (redacted), the other bots go on; given a token that works, it starts and the reason is gone."""

from __future__ import annotations

from pathlib import Path

from bot.fleet.model import Identity
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import SUPPORT_TOKEN, env_for
from tests.harness import running_app, wait_for

BAD = "999999:NOT-A-BOT"


async def test_a_refused_token_is_reported_and_a_working_one_starts_the_bot(tmp_path: Path, fake: FakeOpenAI,
                                                                          cloud: TelegramCloud) -> None:
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=env_for(cloud),
                           config={"fleet": {"poll": 60}}) as app:
        support = Identity(name="support", platform="telegram", credentials={"TELEGRAM_BOT_TOKEN": BAD})
        await app.fleet.put_identity(support, "test")
        app.fleet_watch.poke()
        await wait_for(lambda: "support" in app.bots.failed, within=10)
        assert "support" not in app.bots.running and BAD not in app.bots.failed["support"]
        assert [a.name for a in app.adapters] == ["telegram"]  # not left for /readyz and the watchdog to see
        assert app.adapters[0].connected() and "telegram" in app.hub.deliveries  # the default bot goes on
        await app.fleet.put_identity(support.model_copy(update={"credentials": {"TELEGRAM_BOT_TOKEN": SUPPORT_TOKEN}}),
                                     "test")
        app.fleet_watch.poke()
        await wait_for(lambda: "support" in app.bots.running, within=10)
        assert "support" not in app.bots.failed and [a.name for a in app.adapters] == ["telegram", "telegram@support"]
        await wait_for(lambda: bool(cloud.bots[SUPPORT_TOKEN].calls_of("getUpdates")))
