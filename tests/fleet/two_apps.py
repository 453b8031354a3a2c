"""The one scenario every platform's two identities go through, against the platform's multi-app fake: the default
app (from the environment) and a second one (`beta`, stored while the hub runs), bound to two agents. The second
is checked with the platform before it is stored (wrong credentials refused), starts without touching the first,
both answer in the same chat with their own agent, keep their data apart, and stopping one leaves the other up."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import pytest

from bot.app import App
from bot.config import ConfigError
from bot.fleet.model import Binding, Identity
from bot.live.bots import verify
from tests.fakes.openai_api import FakeOpenAI
from tests.fleet.conftest import AGENTS, by_model, system_and_model, workspace
from tests.harness import wait_for

SECOND = "beta"
LIVE = {"fleet": {"poll": 0.5}}


@dataclass
class TwoApps:
    platform: str
    chat: str  # the chat both apps' bots are in (its id in the session key)
    credentials: Mapping[str, str]  # the second app's
    wrong: Mapping[str, str]  # credentials the platform refuses
    say: Callable[[int, str], Awaitable[None]]  # app 0 or 1: a user's message to its bot in `chat`
    shown: Callable[[int], list[str]]  # what that app's bot has answered in `chat` (finished answers)
    connects: Callable[[int], int]  # how often that app's bot has connected to the platform
    online: Callable[[int], bool]  # whether that app's bot holds its connection now
    settings: Mapping[str, object] = field(default_factory=dict)


async def two_agents(app: App, llm: FakeOpenAI, platform: str) -> None:
    """Helper and Coder stored, the platform's default identity bound to Coder; every answer names its model."""
    by_model(llm)
    data = app.cfg.data_dir
    workspace(data, "helper", "You are Helper. persona-helper\n")
    workspace(data, "coder", "You are Coder. persona-coder\n")
    for agent in AGENTS:
        await app.fleet.put_agent(agent, "test")
    await app.fleet.put_binding(Binding(identity=platform, agent="coder"), "test")


async def switch(app: App, identity: Identity, enabled: bool) -> None:
    """Store the identity (its binding to Helper with it) or disable it, and wait until this hub follows."""
    if enabled:
        await app.fleet.put_identity(identity, "test")
        await app.fleet.put_binding(Binding(identity=identity.name, agent="helper"), "test")
    else:
        stored = (await app.fleet.load()).identities[identity.name]
        await app.fleet.put_identity(stored.model_copy(update={"enabled": False, "credentials": {}}), "test")
    app.fleet_watch.poke()
    await wait_for(lambda: (identity.name in app.bots.running) == enabled, within=10)


async def two_identities(app: App, llm: FakeOpenAI, p: TwoApps) -> None:
    await two_agents(app, llm, p.platform)
    with pytest.raises(ConfigError):  # checked with the platform first: wrong credentials are never stored
        await verify(app.cfg, app.env, Identity(name="bad", platform=p.platform, credentials=dict(p.wrong)))
    second = Identity(name=SECOND, platform=p.platform, credentials=dict(p.credentials), settings=dict(p.settings))
    assert await verify(app.cfg, app.env, second)
    first_connects = p.connects(0)
    await switch(app, second, True)
    await wait_for(lambda: p.online(1), within=10)

    await p.say(0, "hello there")
    await p.say(1, "hello there")
    await wait_for(lambda: bool(p.shown(0) and p.shown(1)), within=15)
    assert p.shown(0) == ["[coder-model] ok"] and p.shown(1) == ["[helper-model] ok"]  # each its own agent
    prompts = {model: system for system, model in system_and_model(llm)}
    assert "persona-coder" in prompts["coder-model"] and "persona-helper" not in prompts["coder-model"]
    assert "persona-helper" in prompts["helper-model"] and "persona-coder" not in prompts["helper-model"]
    first, other = f"{p.platform}:{p.chat}", f"{p.platform}@{SECOND}:{p.chat}"
    ours, theirs = [await app.store.conversations.recent(key, limit=5) for key in (first, other)]
    assert len(ours) == len(theirs) == 1 and ours[0].id != theirs[0].id  # one chat id, two sessions

    own = app.hub.delivery(f"{p.platform}@{SECOND}")
    assert own is not None and own is not app.hub.delivery(p.platform)  # its own pacing budget
    await switch(app, second, False)
    await wait_for(lambda: not p.online(1), within=10)
    assert app.hub.delivery(f"{p.platform}@{SECOND}") is None and app.hub.delivery(p.platform) is not None
    await p.say(0, "still there?")
    await wait_for(lambda: len(p.shown(0)) == 2, within=15)
    assert p.connects(0) == first_connects and p.online(0)  # the first app was never restarted
