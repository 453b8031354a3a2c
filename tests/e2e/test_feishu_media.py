"""Files through the whole app and the real Feishu adapter against the fake open platform's resources."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from tests.e2e import test_feishu_e2e as text_flow
from tests.e2e.test_telegram_e2e import jpeg_bytes
from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.harness import running_app, wait_for

feishu_fake = text_flow.feishu_fake  # the same fake open platform fixture
DM = "oc_dm_media"


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, feishu_fake: FakeFeishu) -> AsyncIterator[App]:
    config = {"server": {"port": 0}, "feishu": {"transport": "webhook"}, "llm": {"vision_models": [MODEL]}}
    async with running_app(tmp_path, fake.base_url, ("feishu",), config=config,
                           env=text_flow.feishu_env(feishu_fake)) as running:
        yield running


async def _dm(app: App, server: FakeFeishu, event_id: str, message_type: str, content: dict[str, Any]) -> None:
    event = server.incoming(event_id, chat_type="p2p", chat_id=DM, message_type=message_type, content=content,
                            token=text_flow.VERIFICATION_TOKEN)
    await text_flow.push(app, event)


async def _answered(server: FakeFeishu, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in server.shown(DM)), 10.0)


async def test_an_image_in_a_post_reaches_the_vision_model(
        app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    fake.script(Text("a green rectangle"))
    key = feishu_fake.put_resource("om_in_ev-post", jpeg_bytes(), image=True)
    post = {"title": "", "content": [[{"tag": "text", "text": "what is this?"}], [{"tag": "img", "image_key": key}]]}
    await _dm(app, feishu_fake, "ev-post", "post", post)
    await _answered(feishu_fake, "a green rectangle")
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?\n[image attached: image (image/jpeg, ")
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert feishu_fake.downloads == [("om_in_ev-post", key, "image")]


async def test_a_file_is_saved_and_sent_back_intact(app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    table = b"name,score\nann,3\n"
    key = feishu_fake.put_resource("om_in_ev-file", table, image=False)
    await _dm(app, feishu_fake, "ev-file", "file", {"file_key": key, "file_name": "scores.csv"})
    await _answered(feishu_fake, "scores.csv")
    saved = fake.requests[0]["body"]["messages"][-1]["content"].split("saved as ")[1].rstrip("]")
    folder = next((app.cfg.data_dir / "chats").iterdir())
    assert saved.startswith("uploads/") and (folder / saved).read_bytes() == table
    picture = jpeg_bytes()
    (folder / "p.jpg").write_bytes(picture)
    fake.script(ToolCalls([("c1", "send_file", f'{{"filepath": "{saved}", "caption": "your table"}}'),
                           ("c2", "send_file", '{"filepath": "p.jpg"}')]), Text("sent"))
    await _dm(app, feishu_fake, "ev-back", "text", {"text": "send them back"})
    await _answered(feishu_fake, "sent")
    files = {u.kind: u for u in feishu_fake.uploaded.values()}
    assert (files["file"].name, files["file"].sha256) == (saved.split("/")[1], hashlib.sha256(table).hexdigest())
    assert files["image"].sha256 == hashlib.sha256(picture).hexdigest()
    sent = [(m["msg_type"], json.loads(m["content"])) for m in feishu_fake.messages.values()
            if m["chat_id"] == DM and m["msg_type"] in ("image", "file") and not m.get("from_user")]
    assert sorted(sent, key=lambda s: s[0]) == [
        ("file", {"file_key": next(k for k, u in feishu_fake.uploaded.items() if u.kind == "file")}),
        ("image", {"image_key": next(k for k, u in feishu_fake.uploaded.items() if u.kind == "image")})]
    assert "your table" in feishu_fake.shown(DM)


async def test_a_resource_the_platform_will_not_give_gets_a_polite_line(
        app: App, feishu_fake: FakeFeishu) -> None:
    await _dm(app, feishu_fake, "ev-gone", "file", {"file_key": "file_v3_unknown", "file_name": "gone.pdf"})
    await _answered(feishu_fake, "gone.pdf")
    assert feishu_fake.downloads == []


async def test_a_spoken_answer_is_a_feishu_audio_message(
        tmp_path: Path, fake: FakeOpenAI, feishu_fake: FakeFeishu) -> None:
    config = {"server": {"port": 0}, "feishu": {"transport": "webhook"},
              "llm": {"speech_model": "tts-1", "voice_replies": "on"}}
    (tmp_path / "voice").mkdir()
    async with running_app(tmp_path / "voice", fake.base_url, ("feishu",), config=config,
                           env=text_flow.feishu_env(feishu_fake)) as app:
        fake.script(Text("听得见吗？Can you hear me?"))
        await _dm(app, feishu_fake, "ev-voice", "text", {"text": "speak to me"})
        await wait_for(lambda: any(u.file_type == "opus" for u in feishu_fake.uploaded.values()), 20.0)
        await wait_for(lambda: any(m["msg_type"] == "audio" for m in feishu_fake.messages.values()), 10.0)
    [audio] = [u for u in feishu_fake.uploaded.values() if u.file_type == "opus"]
    assert [audio.data] == fake.speech.served and audio.duration is not None and audio.duration > 0
    assert fake.speech.requests[0]["input"] == "听得见吗？Can you hear me?"
    assert "听得见吗？Can you hear me?" in feishu_fake.shown(DM)
