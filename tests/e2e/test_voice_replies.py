"""Voice replies on the Telegram fake (real PTB): `/voice on` answers with the text and then a voice message
whose bytes are the speech endpoint's, `auto` speaks only to a voice message, a provider that writes WAV is
transcoded by ffmpeg to Opus, a failing speech endpoint costs only the voice, and without a speech model
`/voice` says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.chats.sessions import SessionKey
from bot.i18n import t
from bot.media.speech import is_ogg_opus
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import running_app, wait_for

SPEECH = {"llm": {"speech_model": "gpt-4o-mini-tts", "speech_voice": "nova", "transcription_model": "whisper-1"}}




def voices(tg: FakeTelegram) -> list[Any]:
    return [u for u in tg.uploads if u.method == "sendVoice"]


async def test_voice_on_answers_with_text_then_the_same_answer_spoken(
        tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram) -> None:
    async with running_app(tmp_path, fake.base_url, ("telegram",), config=SPEECH, env=tg.env) as app:
        tg.inject_message(42, "/voice on")
        await wait_for(lambda: tg.bot_texts(42) == [t("en", "voice_set", mode=t("en", "voice_mode_on"))])
        fake.script(Text("**Lisbon** is lovely in May."))
        tg.inject_message(42, "where should I go?")
        await wait_for(lambda: len(voices(tg)) == 1, within=20)
        assert tg.bot_texts(42)[-2:] == ["Lisbon is lovely in May.", ""]  # the text first, complete; then the voice
        [asked] = fake.speech.requests
        assert asked == {"model": "gpt-4o-mini-tts", "input": "Lisbon is lovely in May.", "voice": "nova",
                         "response_format": "opus"}
        [voice] = voices(tg)
        assert voice.data == fake.speech.served[0] and voice.chat_id == 42
        assert tg.calls_of("sendVoice")[0]["duration"] >= 1
        path = app.lanes.session(SessionKey("telegram", "42")).path
        assert path[-1].role == "assistant" and path[-1].content == "**Lisbon** is lovely in May."  # the tree: text


async def test_auto_speaks_only_to_a_voice_message_and_wav_is_made_opus(
        tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram) -> None:
    fake.speech.answers_in = "wav"  # a provider that only writes WAV: ffmpeg makes the Opus
    config = {"llm": {**SPEECH["llm"], "voice_replies": "auto"}}
    async with running_app(tmp_path, fake.base_url, ("telegram",), config=config, env=tg.env):
        fake.script(Text("typed answer"), Text("spoken answer"))
        tg.inject_message(42, "typed question")
        await wait_for(lambda: "typed answer" in tg.bot_texts(42))
        tg.stored_files["vo-1"] = b"OggS" + bytes(100)
        fake.transcript = "spoken question"
        tg.inject_message(42, media="voice")
        await wait_for(lambda: len(voices(tg)) == 1, within=20)
        assert [r["input"] for r in fake.speech.requests] == ["spoken answer"]  # the typed one was not spoken
        [voice] = voices(tg)
        assert is_ogg_opus(voice.data) and voice.data != fake.speech.served[0]


async def test_failed_speech_costs_only_the_voice_and_no_model_means_no_voice(
        tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram) -> None:
    fake.speech.fail_with = 500
    config = {"llm": {**SPEECH["llm"], "voice_replies": "on", "max_retries": 0}}
    async with running_app(tmp_path, fake.base_url, ("telegram",), config=config, env=tg.env):
        tg.inject_message(42, "hello there")
        await wait_for(lambda: tg.bot_texts(42)[-1:] == [t("en", "speech_failed")], within=20)
        assert "hello there" in tg.bot_texts(42)[0] and not voices(tg)
    (tmp_path / "plain").mkdir()
    async with running_app(tmp_path / "plain", fake.base_url, ("telegram",), env=tg.env):
        tg.inject_message(43, "/voice on")
        await wait_for(lambda: tg.bot_texts(43) == [t("en", "voice_unavailable")])
