"""One `bothub run` with three Slack apps of one workspace as identities (issue 30's model): the default app
and `coder` on Socket Mode, `support` on the Events API under /bots/support/; each calls Slack with its own
tokens, on its own connection, with its own pacing budget, answers with its own agent, and keeps its chats'
data apart from the others' even in a channel all three are in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.app import App
from bot.config import ConfigError
from bot.fleet.model import Binding, Identity
from bot.live.bots import verify
from tests.fakes import slack_users as people
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import EventsPoster, event_callback
from tests.fakes.slack_rules import MAIN_APP, SlackApp, second_app
from tests.fleet.conftest import KEY, by_model, seed, system_and_model
from tests.harness import make_config, running_app, wait_for

SUPPORT, CODER = second_app("support", 2), second_app("coder", 3)
SECRET = "support-signing-secret-for-tests"
SHARED = "C0SHARED"
IDENTITIES = (
    Identity(name="support", platform="slack", settings={"mode": "events"},
             credentials={"SLACK_BOT_TOKEN": SUPPORT.bot_token, "SLACK_SIGNING_SECRET": SECRET}),
    Identity(name="coder", platform="slack",
             credentials={"SLACK_BOT_TOKEN": CODER.bot_token, "SLACK_APP_TOKEN": CODER.app_token}),
)
BINDINGS = (Binding(identity="support", agent="helper"), Binding(identity="coder", agent="coder"))


@pytest_asyncio.fixture
async def workspace() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    server.add_app(SUPPORT)
    server.add_app(CODER)
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, workspace: FakeSlack) -> AsyncIterator[App]:
    env = {"SLACK_BOT_TOKEN": MAIN_APP.bot_token, "SLACK_APP_TOKEN": MAIN_APP.app_token,
           "SLACK_API_BASE": workspace.api_base, "BOTHUB_SECRET_KEY": KEY}
    await seed(tmp_path / "data", env, identities=IDENTITIES, bindings=BINDINGS)
    async with running_app(tmp_path, fake.base_url, ("slack",), env=env,
                           config={"server": {"enabled": True}}) as running:
        yield running


@pytest_asyncio.fixture
async def poster(app: App) -> AsyncIterator[EventsPoster]:
    """Slack's deliveries to the support app's request URL, signed with that app's secret."""
    events = EventsPoster(f"http://127.0.0.1:{app.web_port}/bots/support/slack/events", SECRET)
    yield events
    await events.close()


async def mention(slack: FakeSlack, poster: EventsPoster, app: SlackApp, text: str) -> None:
    """Ann mentions `app` in the shared channel; Slack tells that app (its socket, or its request URL)."""
    if app is SUPPORT:
        event = people.message_event(slack, SHARED, text, mention=True, app=SUPPORT)
        assert (await poster.event(event_callback(event, app_id=SUPPORT.app_id))).status == 200
    else:
        await slack.acked(await people.say(slack, SHARED, text, mention=True, app=app))


async def test_each_app_answers_with_its_own_tokens_connection_budget_and_agent(
        app: App, workspace: FakeSlack, fake: FakeOpenAI, poster: EventsPoster) -> None:
    by_model(fake)
    await wait_for(lambda: workspace.linked(MAIN_APP) and workspace.linked(CODER), within=10)
    for each in (MAIN_APP, SUPPORT, CODER):
        await mention(workspace, poster, each, "hello there")
    await wait_for(lambda: all(workspace.shown(SHARED, app=a) for a in (MAIN_APP, SUPPORT, CODER)), within=15)
    assert workspace.shown(SHARED, app=MAIN_APP) == ["[fake-model] ok"]
    assert workspace.shown(SHARED, app=SUPPORT) == ["[helper-model] ok"]
    assert workspace.shown(SHARED, app=CODER) == ["[coder-model] ok"]
    for each in (MAIN_APP, SUPPORT, CODER):  # every app checked its own token, and posted with it
        assert workspace.calls_of("auth.test", each) and workspace.calls_of("chat.postMessage", each)
        assert {c.token for c in workspace.calls if c.app == each.app_id} <= {each.bot_token, each.app_token}
    assert not workspace.calls_of("apps.connections.open", SUPPORT)  # the Events API app has no socket
    assert workspace.calls_of("apps.connections.open", CODER) and workspace.linked(CODER)
    deliveries = [app.hub.delivery(name) for name in ("slack", "slack@support", "slack@coder")]
    assert all(deliveries) and len({id(d.pacer) for d in deliveries if d}) == 3  # a pacing budget each
    assert workspace.refused == []


async def test_three_apps_in_one_channel_never_see_each_others_data(
        app: App, workspace: FakeSlack, fake: FakeOpenAI, poster: EventsPoster) -> None:
    await wait_for(lambda: workspace.linked(MAIN_APP) and workspace.linked(CODER), within=10)
    fake.script(ToolCalls([("m1", "remember", '{"content": "the launch code is 4242"}')]), Text("kept"))
    await mention(workspace, poster, SUPPORT, "remember the launch code")
    await wait_for(lambda: workspace.shown(SHARED, app=SUPPORT) == ["kept"], within=15)
    fake.script(Text("nothing"))
    await mention(workspace, poster, CODER, "what do you remember?")
    await wait_for(lambda: workspace.shown(SHARED, app=CODER) == ["nothing"], within=15)
    fake.script(Text("the code"))
    await mention(workspace, poster, SUPPORT, "and you?")
    await wait_for(lambda: len(workspace.shown(SHARED, app=SUPPORT)) == 2, within=15)
    systems = [system for system, _ in system_and_model(fake)]
    assert "4242" not in systems[-2] and "4242" in systems[-1]  # the coder app's prompt; the support app's own
    for key, conversations in ((f"slack:{SHARED}", 0), (f"slack@support:{SHARED}", 1), (f"slack@coder:{SHARED}", 1)):
        assert len(await app.store.conversations.recent(key, limit=10)) == conversations
    await workspace.acked(await people.command(workspace, SHARED, "list", app=CODER))
    await wait_for(lambda: len(workspace.shown(SHARED, app=CODER)) == 2, within=15)
    listing = workspace.shown(SHARED, app=CODER)[-1]
    assert "what do you remember" in listing and "launch code" not in listing


async def test_an_apps_tokens_are_checked_with_auth_test_before_it_is_stored(tmp_path: Path,
                                                                          workspace: FakeSlack) -> None:
    """What `bothub identities add … --platform slack` runs first (the spec's doctor, with the identity's own
    credentials and settings)."""
    cfg, env = make_config(tmp_path, "http://127.0.0.1:9/v1", env={"SLACK_API_BASE": workspace.api_base})
    assert await verify(cfg, env, IDENTITIES[0]) == "bot @support in Fake Team (events mode), scopes ok"
    assert "bot @coder" in await verify(cfg, env, IDENTITIES[1])
    with pytest.raises(ConfigError, match="invalid_auth"):
        await verify(cfg, env, IDENTITIES[1].model_copy(update={"credentials": {
            "SLACK_BOT_TOKEN": "xoxb-fake-never-installed", "SLACK_APP_TOKEN": CODER.app_token}}))
