"""The real slack_sdk adapter against the fake Slack: Socket Mode (the default) or the Events API served on a
server like the hub's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from adapters.slack import SlackConfig
from adapters.slack.adapter import SlackAdapter, create
from bot.adapter import NotKept, WebHandler
from bot.messages import InboundEvent
from tests.adapters.contract.driver import serve_routes, services
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import EventsPoster
from tests.fakes.slack_rules import APP_TOKEN, BOT_TOKEN

SECRET = "signing-secret-for-tests"


@dataclass
class Inbox:
    """What the adapter handed to the hub; `hold` makes the hand-over take that long (a slow inbox), `refuse` fails
    that many as a failed inbox write does (NotKept)."""

    handed: list[InboundEvent] = field(default_factory=list)
    hold: float = 0.0
    refuse: int = 0

    async def __call__(self, message: InboundEvent) -> None:
        await asyncio.sleep(self.hold)
        if self.refuse > 0:
            self.refuse -= 1
            raise NotKept("the inbox write failed")
        self.handed.append(message)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


def env(server: FakeSlack, **extra: str) -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "SLACK_API_BASE": server.api_base, **extra}


Started = Callable[..., Awaitable[SlackAdapter]]


@pytest.fixture
async def socket_adapter(slack: FakeSlack) -> AsyncIterator[tuple[SlackAdapter, Inbox]]:
    adapter, inbox = create(SlackConfig(), env(slack), services([])), Inbox()
    await adapter.start(inbox)
    yield adapter, inbox
    await adapter.stop()


@pytest.fixture
async def events(slack: FakeSlack) -> AsyncIterator[tuple[SlackAdapter, Inbox, EventsPoster]]:
    routes: list[tuple[str, str, WebHandler]] = []
    settings = SlackConfig(mode="events")
    adapter = create(settings, env(slack, SLACK_SIGNING_SECRET=SECRET), services(routes))
    runner, base = await serve_routes(routes)
    inbox = Inbox()
    await adapter.start(inbox)
    poster = EventsPoster(base + settings.events_path, SECRET)
    yield adapter, inbox, poster
    await poster.close()
    await adapter.stop()
    await runner.cleanup()
