"""Files through the whole app and the real DingTalk adapter: pictures, files, voice and rich text in (by
download code, within the size cap), files out through media/upload."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from tests.e2e import test_dingtalk_e2e as text_flow
from tests.e2e.test_dingtalk_e2e import DM, answered, robot, say
from tests.e2e.test_telegram_e2e import jpeg_bytes
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.harness import running_app, wait_for

dingtalk_fake = text_flow.dingtalk_fake
CAP = 50_000  # media.max_bytes in these tests


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, dingtalk_fake: FakeDingTalk) -> AsyncIterator[App]:
    config = {"server": {"port": 0}, "llm": {"vision_models": [MODEL]}, "media": {"max_bytes": CAP},
              "dingtalk": {"api_base": dingtalk_fake.base, "oapi_base": dingtalk_fake.base}}
    env = {"DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET}
    async with running_app(tmp_path, fake.base_url, ("dingtalk",), config=config, env=env) as running:
        yield running


def prompt(llm: FakeOpenAI) -> str:
    return json.dumps(llm.requests[-1]["body"]["messages"][-1]["content"], ensure_ascii=False)


async def test_a_rich_text_picture_reaches_the_vision_model(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.script(Text("a green rectangle"))
    dingtalk_fake.files["code-pic"] = jpeg_bytes()
    rich = {"richText": [{"text": "what is this?"}, {"downloadCode": "code-pic", "type": "picture"}]}
    await say(dingtalk_fake, robot(msgtype="richText", content=rich))
    await answered(dingtalk_fake, DM, "a green rectangle")
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?")
    assert image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert [c.body["downloadCode"] for c in dingtalk_fake.calls_to("messageFiles/download")] == ["code-pic"]


async def test_voice_arrives_as_dingtalks_transcription(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.script(Text("it is sunny"))
    dingtalk_fake.files["code-voice"] = b"\x00" * 100
    voice = {"downloadCode": "code-voice", "duration": 2, "recognition": "明天天气怎么样"}
    await say(dingtalk_fake, robot(msgtype="audio", content=voice))
    await answered(dingtalk_fake, DM, "it is sunny")
    assert "明天天气怎么样" in prompt(fake)


async def test_a_file_is_saved_and_sent_back_through_media_upload(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    table = b"name,score\nann,3\n"
    dingtalk_fake.files["code-csv"] = table
    fake.script(Text("got scores.csv"))
    await say(dingtalk_fake, robot(msgtype="file", content={"downloadCode": "code-csv", "fileName": "scores.csv"}))
    await answered(dingtalk_fake, DM, "got scores.csv")
    saved = prompt(fake).split("saved as ")[1].split("]")[0]
    folder = next((app.cfg.data_dir / "chats").iterdir())
    assert (folder / saved).read_bytes() == table
    fake.script(ToolCalls([("c1", "send_file", f'{{"filepath": "{saved}", "caption": "your table"}}')]), Text("sent"))
    await say(dingtalk_fake, robot("send it back"))
    await answered(dingtalk_fake, DM, "sent")
    ((name, data),) = dingtalk_fake.uploads.values()
    assert hashlib.sha256(data).digest() == hashlib.sha256(table).digest() and name == saved.split("/")[1]
    kinds = [c.body["msgKey"] for c in dingtalk_fake.calls_to("oToMessages/batchSend")]
    assert kinds == ["sampleFile", "sampleText"] and "your table" in dingtalk_fake.shown(DM)


async def test_a_file_over_the_cap_is_not_taken_and_the_user_is_told(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    dingtalk_fake.files["code-big"] = b"x" * (CAP * 3)
    fake.script(Text("noted"))
    await say(dingtalk_fake, robot(msgtype="file", content={"downloadCode": "code-big", "fileName": "big.bin"}))
    await answered(dingtalk_fake, DM, "big.bin")
    folder = app.cfg.data_dir / "chats"
    assert not any(p.name == "big.bin" for p in folder.rglob("*"))


async def test_a_kind_the_bot_cannot_read_gets_a_polite_line(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    await say(dingtalk_fake, robot(msgtype="chatRecord", content={"summary": "a forwarded chat"}))
    await wait_for(lambda: len(dingtalk_fake.shown(DM)) == 1)
    assert "only read text" in dingtalk_fake.shown(DM)[0] and fake.requests == []
