"""The Events API endpoint: only signed, fresh, first-seen requests get in; the 200 comes once the event is in
the inbox (in time for Slack's 3 s), and Slack's retries of one event are handed over once."""

from __future__ import annotations

import json
import time

from adapters.slack.adapter import SlackAdapter
from bot.messages import IncomingMessage
from tests.adapters.slack.conftest import Inbox
from tests.fakes import slack_users as people
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import EventsPoster, event_callback, signature

Events = tuple[SlackAdapter, Inbox, EventsPoster]


def dm_event(slack: FakeSlack, text: str = "hi") -> dict[str, object]:
    return event_callback(people.message_event(slack, "D0ANN", text))


async def test_a_signed_event_is_in_the_inbox_before_its_200(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    inbox.hold = 0.4
    answer = await poster.event(dm_event(slack, "hello"))
    assert answer.status == 200 and answer.took >= 0.4  # acknowledged only after the hand-over
    [message] = inbox.handed
    assert isinstance(message, IncomingMessage) and (message.chat_id, message.text) == ("D0ANN", "hello")


async def test_an_inbox_too_slow_for_slacks_3_seconds_gets_a_503_and_the_retry_is_deduplicated(
        events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    inbox.hold = 2.8
    payload = dm_event(slack, "slow")
    first = await poster.event(payload)
    assert first.status == 503 and first.took < 3.0  # Slack will retry; the event still reaches the inbox
    inbox.hold = 0.0
    retried = await poster.event(payload, retry=1)
    assert retried.status == 200
    assert [m.text for m in inbox.handed if isinstance(m, IncomingMessage)] == ["slow"]


async def test_an_event_not_kept_gets_a_503_and_slack_s_retry_is_taken(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    inbox.refuse = 1
    payload = dm_event(slack, "kept on retry")
    assert (await poster.event(payload)).status == 503
    assert (await poster.event(payload, retry=1)).status == 200  # not dropped as a duplicate
    assert [m.text for m in inbox.handed if isinstance(m, IncomingMessage)] == ["kept on retry"]


async def test_retries_of_one_event_are_handed_over_once(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    payload = dm_event(slack, "once")
    for retry in range(3):
        assert (await poster.event(payload, retry=retry)).status == 200
    assert [m.text for m in inbox.handed if isinstance(m, IncomingMessage)] == ["once"]


async def test_absent_empty_wrong_and_stale_signatures_are_refused(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    body = json.dumps(dm_event(slack)).encode()
    assert (await poster.unsigned(dm_event(slack))).status == 401
    assert (await poster.post(body, "application/json", signed="")).status == 401
    assert (await poster.post(body, "application/json", signed="v0=" + "0" * 64)).status == 401
    wrong_secret = EventsPoster(poster.url, "not-the-secret")
    try:
        assert (await wrong_secret.post(body, "application/json")).status == 401
    finally:
        await wrong_secret.close()
    stale = str(int(time.time()) - 301)
    assert (await poster.post(body, "application/json", timestamp=stale,
                              signed=signature(poster.secret, stale, body))).status == 401
    assert (await poster.post(body, "application/json", timestamp="yesterday")).status == 401
    assert inbox.handed == []


async def test_a_captured_request_replayed_is_refused(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    body = json.dumps(dm_event(slack, "mine")).encode()
    stamp = str(int(time.time()))
    signed = signature(poster.secret, stamp, body)
    assert (await poster.post(body, "application/json", timestamp=stamp, signed=signed)).status == 200
    assert (await poster.post(body, "application/json", timestamp=stamp, signed=signed)).status == 401
    assert len(inbox.handed) == 1


async def test_url_verification_answers_the_challenge(events: Events) -> None:
    _, _, poster = events
    answer = await poster.event({"type": "url_verification", "challenge": "abc123", "token": "x"})
    assert answer.status == 200 and json.loads(answer.body) == {"challenge": "abc123"}


async def test_slash_commands_and_presses_arrive_over_http_as_command_text(events: Events, slack: FakeSlack) -> None:
    _, inbox, poster = events
    slack.open_channel("C0GENERAL", "channel")
    form = {"command": "/bothub", "text": "goto 3", "channel_id": "C0GENERAL", "user_id": "U0ANN",
            "user_name": "ann", "trigger_id": "t-1", "team_id": "T0FAKE"}
    assert (await poster.command(form)).status == 200
    press = {"type": "block_actions", "user": {"id": "U0ANN", "username": "ann"}, "channel": {"id": "D0ANN"},
             "container": {"message_ts": "1.2", "channel_id": "D0ANN"},
             "actions": [{"action_id": "bothub-0-0", "value": "/tree", "action_ts": "9.9"}]}
    assert (await poster.interaction(press)).status == 200
    assert [(m.chat_id, m.text, m.is_group) for m in inbox.handed if isinstance(m, IncomingMessage)] == [
        ("C0GENERAL", "/goto 3", True), ("D0ANN", "/tree", False)]
    assert inbox.handed[1].is_button  # type: ignore[union-attr]
