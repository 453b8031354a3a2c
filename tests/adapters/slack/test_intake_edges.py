"""Taking events in when something is off: bodies that are no event, requests while stopped or too big, envelopes
with nothing for the hub, a hub that fails, and tokens Slack refuses at start."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from urllib.parse import urlencode

import pytest

from adapters.slack import SlackConfig
from adapters.slack.adapter import create
from adapters.slack.events import FRESH, MAX_BODY, Rejected, Verifier
from bot.config import ConfigError
from bot.messages import IncomingMessage
from tests.adapters.contract.driver import services
from tests.adapters.slack.conftest import Inbox, env
from tests.adapters.slack.test_events_api import Events, dm_event
from tests.fakes import slack_users as people
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import event_callback, signature
from tests.fakes.slack_socket import Envelope

Socket = tuple[object, Inbox]
FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize(("body", "content_type"), [
    (b"[1, 2]", "application/json"),  # JSON, but no object
    (b"{not json", "application/json"),
    (urlencode({"payload": "[1]"}).encode(), FORM),  # an interaction that is no object
    (urlencode({"text": "hi"}).encode(), FORM),  # neither a command nor an interaction
    (b"command=\xff\xfe", FORM),  # not UTF-8
])
async def test_a_signed_body_that_is_no_event_is_a_400(events: Events, body: bytes, content_type: str) -> None:
    _, inbox, poster = events
    assert (await poster.post(body, content_type)).status == 400
    assert inbox.handed == []


async def test_a_body_over_the_limit_is_refused_before_it_is_read(events: Events) -> None:
    _, inbox, poster = events
    assert (await poster.post(b"x" * (MAX_BODY + 1), "application/json")).status == 413
    assert inbox.handed == []


async def test_an_event_while_stopped_is_a_503_so_slack_retries(events: Events, slack: FakeSlack) -> None:
    adapter, inbox, poster = events
    await adapter.stop()
    assert (await poster.event(dm_event(slack, "late"))).status == 503
    assert inbox.handed == []


@pytest.mark.parametrize("payload", [
    {"type": "event_callback", "event_id": "Ev1", "event": "not an object"},
    event_callback({"type": "message", "subtype": "message_changed", "channel": "D0ANN", "ts": "1.1"}),
])
async def test_an_event_with_nothing_for_the_hub_is_acknowledged(
        events: Events, payload: dict[str, object], caplog: pytest.LogCaptureFixture) -> None:
    _, inbox, poster = events
    with caplog.at_level(logging.ERROR, "bothub.slack"):
        assert (await poster.event(payload)).status == 200  # anything else and Slack sends it again
    assert inbox.handed == [] and caplog.text == ""  # expected, not a failure


async def test_a_command_or_press_that_is_not_ours_is_acknowledged_and_dropped(
        events: Events, caplog: pytest.LogCaptureFixture) -> None:
    _, inbox, poster = events
    press = {"type": "block_actions", "user": {"id": "U0ANN"}, "channel": {"id": "D0ANN"},
             "actions": [{"action_id": "another-apps-button", "value": "x", "action_ts": "1.0"}]}
    with caplog.at_level(logging.ERROR, "bothub.slack"):
        assert (await poster.command({"command": "/bothub", "text": "tree"})).status == 200  # no channel, no user
        assert (await poster.interaction(press)).status == 200
        assert (await poster.interaction({"type": "view_submission", "view": {}})).status == 200
    assert inbox.handed == [] and caplog.text == ""


async def test_an_envelope_not_kept_is_left_unacked_and_slack_s_retry_is_taken(
        socket_adapter: Socket, slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    _, inbox = socket_adapter
    inbox.refuse = 1  # the hub could not store it (NotKept)
    payload = event_callback(people.message_event(slack, "D0ANN", "hi"))
    with caplog.at_level(logging.WARNING, "bothub.slack"):
        first = await slack.push("events_api", payload)
        for _ in range(250):
            if "not kept; left unacked" in caplog.text:
                break
            await asyncio.sleep(0.02)
    assert "not kept; left unacked" in caplog.text and not first.done.is_set()
    await slack.acked(await slack.push("events_api", payload))  # Slack sends it again: taken, not dropped as seen
    assert [m.text for m in inbox.handed if isinstance(m, IncomingMessage)] == ["hi"]


async def test_an_envelope_of_a_kind_we_do_not_take_is_acked_empty(socket_adapter: Socket, slack: FakeSlack) -> None:
    _, inbox = socket_adapter
    envelope: Envelope = await slack.acked(await slack.push("app_home_opened", {"user": "U0ANN"}))
    assert envelope.response is None and inbox.handed == []
    await slack.acked(await slack.push("events_api", event_callback(people.message_event(slack, "D0ANN", "next"))))
    assert [m.text for m in inbox.handed if isinstance(m, IncomingMessage)] == ["next"]


@pytest.mark.parametrize(("method", "error", "mode", "reason"), [
    ("auth.test", "invalid_auth", "socket", "Slack refused SLACK_BOT_TOKEN: invalid_auth"),
    ("apps.connections.open", "invalid_auth", "socket", "Slack refused SLACK_APP_TOKEN for Socket Mode: invalid_auth"),
])
async def test_a_token_slack_refuses_fails_the_start_naming_it(
        slack: FakeSlack, method: str, error: str, mode: str, reason: str) -> None:
    adapter = create(SlackConfig(mode=mode), env(slack), services([]))  # type: ignore[arg-type]
    slack.fail(method, error)
    try:
        with pytest.raises(ConfigError, match=reason):
            await adapter.start(Inbox())
    finally:
        await adapter.stop()


async def test_slack_out_of_reach_is_a_connection_error(slack: FakeSlack) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}/api/"
    adapter = create(SlackConfig(), {**env(slack), "SLACK_API_BASE": base}, services([]))
    try:
        with pytest.raises(ConnectionError, match=f"cannot reach Slack at {base}"):
            await adapter.start(Inbox())
    finally:
        await adapter.stop()


def test_signatures_are_forgotten_once_too_old_to_replay() -> None:
    now = [time.time() - 150]  # slack_sdk also checks the timestamp, against the real clock
    verifier = Verifier("s", clock=lambda: now[0])

    def check(body: bytes) -> None:
        stamp = str(int(now[0]))
        verifier.check(body, stamp, signature("s", stamp, body))

    check(b"first")
    now[0] += FRESH + 1
    check(b"second")
    assert len(verifier._seen) == 1  # the first could no longer be replayed anyway: it is stale
    with pytest.raises(Rejected, match="replayed"):
        verifier.check(b"second", str(int(now[0])), signature("s", str(int(now[0])), b"second"))

