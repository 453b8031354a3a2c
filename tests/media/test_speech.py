"""Speech for voice replies: the words read aloud, Ogg/Opus kept or made by the real ffmpeg, duration and
waveform read from the pages (checked against ffprobe), and a failing ffmpeg said plainly."""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile

import pytest

from bot.media import speech
from bot.media.speech import describe, is_ogg_opus, spoken_text, to_ogg_opus, voice_notes
from tests.fakes.openai_speech import tone


async def probe_seconds(data: bytes) -> float:
    """The duration ffprobe reads from the whole file (a pipe cannot be seeked to its end)."""
    with tempfile.NamedTemporaryFile(suffix=".audio") as file:
        file.write(data)
        file.flush()
        proc = await asyncio.create_subprocess_exec(
            "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", file.name,
            stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
    return float(json.loads(out)["format"]["duration"])


def test_the_words_are_read_not_the_marks() -> None:
    markdown = ("# Plan\n\nGo **now**, see [the map](https://example.org/map) and `ls -l`.\n\n"
                "- first\n- 第二\n\n```python\nprint('x')\n```\nDone.")
    assert spoken_text(markdown, "(code)") == "Plan\nGo now, see the map and ls -l.\nfirst\n第二\n(code)\nDone."
    assert spoken_text("") == ""


async def test_opus_is_kept_and_described_like_ffprobe_sees_it() -> None:
    audio = await tone(2.5, "ogg")
    assert is_ogg_opus(audio)
    spoken = describe(audio)
    assert spoken.data == audio
    assert spoken.note.duration == pytest.approx(await probe_seconds(audio), abs=0.05)
    points = base64.b64decode(spoken.note.waveform)
    assert 1 <= len(points) <= speech.WAVEFORM_POINTS and max(points) == 255


async def test_other_formats_are_transcoded_by_ffmpeg() -> None:
    wav = await tone(1.0, "wav")
    assert not is_ogg_opus(wav)
    ogg = await to_ogg_opus(wav)
    assert is_ogg_opus(ogg) and await probe_seconds(ogg) == pytest.approx(1.0, abs=0.1)
    with pytest.raises(speech.SpeechFailed, match="ffmpeg could not transcode"):
        await to_ogg_opus(b"this is not audio at all")


async def test_a_long_answer_is_spoken_in_parts_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    async def speak(text: str) -> tuple[bytes, str]:
        asked.append(text)
        return await tone(0.5, "wav"), "audio/wav"  # a provider that only writes WAV

    monkeypatch.setattr(speech, "MAX_INPUT", 60)
    text = " ".join(f"Sentence number {n}." for n in range(8))
    notes = await voice_notes(speak, text)
    assert len(notes) == len(asked) >= 3 and all(len(part) <= 60 for part in asked)
    assert " ".join(asked) == text and all(is_ogg_opus(n.data) for n in notes)
    assert await voice_notes(speak, "```\nonly code\n```", "") == []  # nothing to say: nothing asked
    assert len(asked) == len(notes)
