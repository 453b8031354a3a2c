"""Files through the whole app and the real discord.py adapter against the fake Discord's CDN and uploads."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from bot.i18n import t
from tests.e2e import test_discord_e2e as text_flow
from tests.e2e.test_telegram_e2e import jpeg_bytes
from tests.fakes.discord_api import DM_CHANNEL_ID, FakeDiscord
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.harness import running_app, wait_for

discord_fake = text_flow.discord_fake  # the same fake Discord fixture


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, discord_fake: FakeDiscord) -> AsyncIterator[App]:
    env = text_flow.discord_env(discord_fake)
    config = {"llm": {"vision_models": [MODEL]}}
    async with running_app(tmp_path, fake.base_url, ("discord",), env=env, config=config) as running:
        yield running


def _shown(server: FakeDiscord) -> list[str]:
    return [m["content"] for m in server.messages.values() if m["channel_id"] == DM_CHANNEL_ID]


async def _dm(server: FakeDiscord, text: str, *attachments: dict) -> None:
    await server.dispatch("MESSAGE_CREATE", server.user_message(text, dm=True, attachments=list(attachments)))


async def _answered(server: FakeDiscord, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in _shown(server)), 10.0)


async def test_a_photo_reaches_the_vision_model_as_an_image_part(
        app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    fake.script(Text("a green rectangle"))
    photo = discord_fake.attachment("photo.jpg", jpeg_bytes(), "image/jpeg")
    await _dm(discord_fake, "what is this?", photo)
    await _answered(discord_fake, "a green rectangle")
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?\n[image attached: photo.jpg (image/jpeg, ")
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert discord_fake.downloads == [photo["url"].split(str(discord_fake.port))[1]]


async def test_a_document_is_saved_and_sent_back_intact(
        app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    table = b"name,score\nann,3\n"
    await _dm(discord_fake, "keep this", discord_fake.attachment("scores.csv", table, "text/csv; charset=utf-8"))
    await _answered(discord_fake, "keep this")
    saved = fake.requests[0]["body"]["messages"][-1]["content"].split("saved as ")[1].rstrip("]")
    folder = next((app.cfg.data_dir / "chats").iterdir())
    assert saved.startswith("uploads/") and (folder / saved).read_bytes() == table
    fake.script(ToolCalls([("c1", "send_file", f'{{"filepath": "{saved}", "caption": "your table"}}')]),
                Text("sent"))
    await _dm(discord_fake, "send it back")
    await _answered(discord_fake, "sent")
    [upload] = discord_fake.uploads
    assert (upload.channel_id, upload.filename) == (DM_CHANNEL_ID, saved.split("/")[1])
    assert upload.sha256 == hashlib.sha256(table).hexdigest()
    [posted] = [m for m in discord_fake.messages.values() if m["attachments"]]
    assert posted["content"] == "your table" and posted["attachments"][0]["size"] == len(table)
    picture = jpeg_bytes()
    (folder / "p.jpg").write_bytes(picture)
    fake.script(ToolCalls([("c2", "send_file", '{"filepath": "p.jpg"}')]), Text("there"))
    await _dm(discord_fake, "and the picture")
    await _answered(discord_fake, "there")
    assert [(u.filename, u.sha256) for u in discord_fake.uploads[1:]] == [
        ("p.jpg", hashlib.sha256(picture).hexdigest())]


async def test_an_attachment_on_another_host_is_refused(
        app: App, discord_fake: FakeDiscord, fake: FakeOpenAI) -> None:
    elsewhere = discord_fake.attachment("secret.txt", b"internal", "text/plain")
    elsewhere["url"] = elsewhere["url"].replace("127.0.0.1", "localhost")  # the same server, another host
    await _dm(discord_fake, "read this", elsewhere)
    await _answered(discord_fake, "read this")
    assert _shown(discord_fake)[0] == t("en", "media_fetch_failed", name="secret.txt")
    assert discord_fake.downloads == [] and "[file attached" not in str(fake.requests[0]["body"]["messages"][-1])


async def test_a_spoken_answer_is_a_discord_voice_message(
        tmp_path: Path, fake: FakeOpenAI, discord_fake: FakeDiscord) -> None:
    config = {"llm": {"speech_model": "tts-1", "voice_replies": "on"}}
    (tmp_path / "voice").mkdir()
    async with running_app(tmp_path / "voice", fake.base_url, ("discord",), env=text_flow.discord_env(discord_fake),
                           config=config):
        fake.script(Text("Spoken and written."))
        await _dm(discord_fake, "say it")
        await wait_for(lambda: any(m["flags"] == 8192 for m in discord_fake.messages.values()), 20.0)
    [message] = [m for m in discord_fake.messages.values() if m["flags"] == 8192]
    assert message["content"] == "" and "Spoken and written." in _shown(discord_fake)
    [attachment] = message["attachments"]
    assert attachment["filename"] == "voice-message.ogg" and attachment["duration_secs"] > 0
    assert [u.data for u in discord_fake.uploads if u.filename == "voice-message.ogg"] == fake.speech.served
