"""response_url answers: only to Slack's hooks host (or the configured API base's), at most five posts, for 30
minutes — against the fake's response_url, which refuses a sixth."""

from __future__ import annotations

import aiohttp
import pytest

from adapters.slack.responses import USES, VALID, Responses
from bot.adapter import SendFailed
from bot.messages import ChatRef, Interaction
from tests.fakes.slack_api import FakeSlack

CHAT = ChatRef("slack", "C0OUTSIDE", None, True, Interaction("trigger-1"))


async def test_a_response_url_posts_five_times_in_thirty_minutes_and_only_to_slacks_hosts(slack: FakeSlack) -> None:
    now = [0.0]
    async with aiohttp.ClientSession() as session:
        responses = Responses(lambda: session, slack.api_base, clock=lambda: now[0])
        responses.remember("trigger-1", "http://127.0.0.1:1/hooks/elsewhere")  # not Slack's: never posted to
        assert responses.usable(CHAT) is None
        responses.remember("trigger-1", slack.response_url("C0OUTSIDE"))
        for n in range(USES):
            assert responses.usable(CHAT) == "trigger-1"
            await responses.post("trigger-1", f"part {n}", None, replace=False)
        assert responses.usable(CHAT) is None  # used up
        with pytest.raises(SendFailed, match="404"):  # and if tried anyway, the fake refuses like Slack
            await responses.post("trigger-1", "sixth", None, replace=False)
        responses.remember("trigger-1", slack.response_url("C0OUTSIDE"))
        assert responses.usable(CHAT) == "trigger-1"
        now[0] += VALID + 1
        assert responses.usable(CHAT) is None  # expired
    assert [m.text for m in slack.messages["C0OUTSIDE"]] == [f"part {n}" for n in range(USES)]
