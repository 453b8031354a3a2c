"""Voice replies in the web chat, in real Chromium: after `/voice on` an answer comes with a player whose file
is the speech endpoint's audio, and the browser can play it (it reads its duration)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.fakes.openai_api import FakeOpenAI, Text
from tests.web.browser import chromium
from tests.web.conftest import serving, sign_in


async def test_a_spoken_answer_comes_with_a_player(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = {"llm": {"speech_model": "tts-1"}}
    async with serving(tmp_path, fake, ("web",), config=config) as hub, \
            chromium(tmp_path / "browser") as browser:
        await sign_in(browser, hub)
        page = browser.page
        await page.goto(hub.url("/webchat"))
        await page.locator("body[data-stream=open][data-history=loaded]").wait_for()
        await page.fill("#composer textarea", "/voice on")
        await page.press("#composer textarea", "Enter")
        await expect(page.locator("#log .bubble.bot .body").last).to_have_text("Voice answers are now on, for every "
                                                                            "answer.")
        fake.script(Text("Here is the **plan**."))
        await page.fill("#composer textarea", "what is the plan?")
        await page.press("#composer textarea", "Enter")
        player = page.locator("#log .bubble.file audio")
        await expect(player).to_have_count(1, timeout=20_000)
        assert fake.speech.requests[-1]["input"] == "Here is the plan."
        served = list(fake.speech.served[-1])
        bytes_of = "async (url) => Array.from(new Uint8Array(await (await fetch(url)).arrayBuffer()))"
        fetched = await page.evaluate(bytes_of, await player.get_attribute("src"))
        assert fetched == served
        duration = await player.evaluate("""(audio) => new Promise((done) => {
            if (audio.readyState >= 1) return done(audio.duration);
            audio.addEventListener("loadedmetadata", () => done(audio.duration)); audio.load(); })""")
        assert 0.1 < duration < 5
