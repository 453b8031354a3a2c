"""Files through the whole app and the real slack_sdk adapter: shared files fetched with files.info and the bot
token, files the agent sends posted through Slack's external upload flow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from tests.e2e.test_slack_e2e import DM, answered, slack, slack_env
from tests.e2e.test_telegram_e2e import jpeg_bytes
from tests.fakes import slack_users as people
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.fakes.slack_api import FakeSlack
from tests.harness import running_app

__all__ = ["slack"]  # the fake Slack fixture, shared with the text flow


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, slack: FakeSlack) -> AsyncIterator[App]:
    config = {"llm": {"vision_models": [MODEL]}}
    async with running_app(tmp_path, fake.base_url, ("slack",), env=slack_env(slack), config=config) as running:
        yield running


async def test_a_shared_photo_reaches_the_vision_model(app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    fake.script(Text("a green rectangle"))
    photo = slack.store_file("photo.jpg", "image/jpeg", jpeg_bytes())
    await slack.acked(await people.say(slack, DM, "what is this?", files=(photo,)))
    await answered(slack, DM, "a green rectangle")
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?\n[image attached: photo.jpg (image/jpeg, ")
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert slack.downloads == [(photo["id"], True)]  # with the bot token, or Slack serves its sign-in page


async def test_a_document_is_saved_and_sent_back_through_the_external_upload(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    table = b"name,score\nann,3\n"
    shared = slack.store_file("scores.csv", "text/csv", table)
    await slack.acked(await people.say(slack, DM, "keep this", files=(shared,)))
    await answered(slack, DM, "keep this")
    saved = fake.requests[0]["body"]["messages"][-1]["content"].split("saved as ")[1].rstrip("]")
    fake.script(ToolCalls([("c1", "send_file", f'{{"filepath": "{saved}", "caption": "your table"}}')]),
                Text("sent"))
    await slack.acked(await people.say(slack, DM, "send it back"))
    await answered(slack, DM, "sent")
    [upload] = slack.uploads.values()
    assert (upload.channel, upload.name, upload.data, upload.comment) == (DM, saved.split("/")[1], table, "your table")
    assert [c.method for c in slack.calls if "upload" in c.method.lower()] == [
        "files.getUploadURLExternal", "files.completeUploadExternal"]
