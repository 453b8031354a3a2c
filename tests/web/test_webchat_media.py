"""Files in the web chat: a picked photo reaches a vision model, a sent file downloads intact, bad files refused."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from playwright.async_api import expect

from adapters.web.files import SENT_BUDGET, STAGED_TTL, WebFiles
from bot.adapter import OutgoingFile, SendFailed
from bot.chats.sessions import SessionKey
from bot.messages import Attachment, ChatRef
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.harness import running_app
from tests.media.test_media_hub import jpeg
from tests.web.browser import Browser
from tests.web.conftest import PASSWORD, Dashboard
from tests.web.test_webchat import open_chat


@pytest_asyncio.fixture
async def vision_chat(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Dashboard]:
    """The web chat with a vision model and a small file cap (100 kB)."""
    config = {"server": {"enabled": True, "port": 0}, "llm": {"vision_models": [MODEL]},
              "media": {"max_bytes": 100_000}}
    async with running_app(tmp_path, fake.base_url, ("web",), config=config,
                           env={"BOTHUB_ADMIN_PASSWORD": PASSWORD}) as app:
        yield Dashboard(app, f"http://127.0.0.1:{app.web_port}")


def uploads(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "data" / "chats").glob("*/uploads/*"))


async def test_a_picked_photo_reaches_the_vision_model(vision_chat: Dashboard, browser: Browser, fake: FakeOpenAI,
                                                       tmp_path: Path) -> None:
    page = await open_chat(browser, vision_chat)
    photo = tmp_path / "red.jpg"
    photo.write_bytes(jpeg(300, 200, exif=False))
    fake.script(Text("a red rectangle"))
    await page.set_input_files("#composer input[type=file]", str(photo))
    await page.fill("#composer textarea", "what is this?")
    await page.press("#composer textarea", "Enter")
    await expect(page.locator("#log .bubble.bot .body")).to_have_text(["a red rectangle"])
    assert await page.locator("#log .bubble.mine .attached").all_inner_texts() == ["📎 red.jpg"]
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?\n[image attached: red.jpg (image/jpeg")
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert [p.name.endswith("-red.jpg") for p in uploads(tmp_path)] == [True]


async def test_a_file_the_agent_sends_downloads_intact_and_only_here(
        vision_chat: Dashboard, browser: Browser, fake: FakeOpenAI, tmp_path: Path,
        http: aiohttp.ClientSession) -> None:
    page = await open_chat(browser, vision_chat)
    fake.script(Text("hi"))
    await page.fill("#composer textarea", "hello")
    await page.press("#composer textarea", "Enter")
    await expect(page.locator("#log .bubble.bot")).to_have_count(1)
    src = await page.locator("#tree-panel").get_attribute("data-src")
    assert src is not None and "chat=web%3A" in src
    session = vision_chat.app.lanes.session(SessionKey("web", src.split("chat=web%3A")[1]))
    folder = vision_chat.app.hub.runner.workdir(session)
    folder.mkdir(parents=True, exist_ok=True)
    report = b"quarter,revenue\nQ1,10\n" * 500
    (folder / "report.csv").write_bytes(report)
    fake.script(ToolCalls([("c1", "send_file", '{"filepath": "report.csv", "caption": "the numbers"}')]),
                Text("sent"))
    await page.fill("#composer textarea", "send me the report")
    await page.press("#composer textarea", "Enter")
    link = page.locator("#log .bubble.file a[download='report.csv']")
    await expect(link).to_have_text("📄 report.csv")
    await expect(page.locator("#log .bubble.file .body")).to_have_text("the numbers")
    href = await link.get_attribute("href")
    assert href is not None
    got = await page.request.get(vision_chat.url(href))
    assert got.status == 200 and got.headers["content-disposition"].startswith("attachment;")
    assert hashlib.sha256(await got.body()).digest() == hashlib.sha256(report).digest()
    await http.post(vision_chat.url("/login"), data={"password": PASSWORD})  # another browser session
    other = await http.get(vision_chat.url(href))
    assert other.status == 404


async def test_bad_files_are_refused_politely_and_leave_nothing(
        vision_chat: Dashboard, http: aiohttp.ClientSession, fake: FakeOpenAI, tmp_path: Path) -> None:
    page = await (await http.post(vision_chat.url("/login"), data={"password": PASSWORD})).text()
    headers = {"X-CSRF-Token": page.split('name="csrf-token" content="')[1].split('"')[0]}
    events = await http.get(vision_chat.url("/webchat/events"))
    for name, data, mime in [("big.bin", bytes(100_001), "application/octet-stream"),
                             ("empty.txt", b"", "text/plain"),
                             ("fake.jpg", b"MZ\x90\x00 not a picture", "image/jpeg")]:
        form = aiohttp.FormData()
        form.add_field("text", "")
        form.add_field("files", data, filename=name, content_type=mime)
        assert (await http.post(vision_chat.url("/webchat/send"), data=form, headers=headers)).status == 202
    said = []
    while len(said) < 3:
        line = (await events.content.readline()).decode()
        if line.startswith("data:") and '"html"' in line:
            said.append(line)
    assert "big.bin is larger than 0.1 MB" in said[0]
    assert "empty.txt is empty (0 bytes)" in said[1]
    assert "fake.jpg says it is image/jpeg, but its contents are something else" in said[2]
    assert uploads(tmp_path) == [] and fake.requests == []
    blank = aiohttp.FormData()
    blank.add_field("text", " ", content_type="text/plain")  # a multipart form with no files and no words
    nothing = await http.post(vision_chat.url("/webchat/send"), data=blank, headers=headers)
    assert nothing.status == 400 and await nothing.json() == {"error": "the message is empty"}
    events.close()


async def test_uploads_expire_and_sent_files_stay_within_their_budget() -> None:
    now = [0.0]
    published: list[tuple[str, str]] = []
    files = WebFiles(lambda chat, event, data: published.append((chat, event)) or 1, clock=lambda: now[0])
    old = files.stage(b"old")
    now[0] = STAGED_TTL + 1
    fresh = files.stage(b"fresh")  # staging sweeps what waited too long
    with pytest.raises(SendFailed, match="send the file again"):
        [c async for c in files.download(Attachment("file", "a", "", 3, old))]
    assert [c async for c in files.download(Attachment("file", "b", "", 5, fresh))] == [b"fresh"]
    chat = ChatRef("web", "s1", None, False)
    big = OutgoingFile(bytes(SENT_BUDGET // 2 + 1), "big.bin", "application/octet-stream")
    first, second = await files.upload(chat, big), await files.upload(chat, big)
    assert files.sent("s1", first.message_id) is None  # pushed out by the newer one
    assert files.sent("s1", second.message_id) is big and files.sent("s2", second.message_id) is None
    assert published == [("s1", "file"), ("s1", "file")]
