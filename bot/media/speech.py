"""Voice replies: an answer's text as OGG/Opus voice notes, the format every chat platform plays as a voice message.

The text is what a person would read aloud: Markdown marks dropped, links by their words, code blocks named
rather than spelled out. Long answers are spoken in parts (the speech endpoint takes at most 4 096 characters).
The provider is asked for Opus; when it answers in another format (a local engine that only writes WAV or MP3),
Debian's ffmpeg transcodes it, in a child process with a deadline. Each note carries its duration and a coarse
waveform (some platforms draw one), both read from the Ogg pages, so no audio is decoded.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.adapter import VoiceNote
from bot.replies import split_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MAX_INPUT = 4000  # characters per speech request (the endpoint's limit is 4 096)
TRANSCODE_TIMEOUT = 60.0
WAVEFORM_POINTS = 64
OGG_MIME = "audio/ogg"

Speak = Callable[[str], Awaitable[tuple[bytes, str]]]  # text → (audio bytes, the provider's content type)


class SpeechFailed(Exception):
    """The audio could not be made (the provider failed, or ffmpeg could not read what it sent)."""


@dataclass(frozen=True, slots=True)
class Spoken:
    data: bytes  # OGG/Opus
    note: VoiceNote  # its duration and waveform


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def spoken_text(markdown: str, code_word: str = "(code)") -> str:
    """What to read aloud: the words of the Markdown, without its marks."""
    out: list[str] = []
    for token in _parser().parse(markdown):
        if token.type in ("fence", "code_block"):
            out.append(f"\n{code_word}\n")
        elif token.type == "inline":
            out.append("".join(child.content for child in token.children or () if child.type in
                               ("text", "code_inline")) + "\n")
        elif token.type in ("paragraph_close", "heading_close", "list_item_close"):
            out.append("\n")
    lines = (" ".join(line.split()) for line in "".join(out).splitlines())
    return "\n".join(line for line in lines if line)


def _pages(data: bytes) -> list[tuple[int, int]]:
    """(granule position, page size) of each Ogg page."""
    pages, at = [], data.find(b"OggS")
    while at >= 0 and at + 27 <= len(data):
        segments = data[at + 26]
        table = data[at + 27:at + 27 + segments]
        size = 27 + segments + sum(table)
        pages.append((int.from_bytes(data[at + 6:at + 14], "little", signed=True), size))
        at = data.find(b"OggS", at + size)
    return pages


def is_ogg_opus(data: bytes) -> bool:
    return data.startswith(b"OggS") and b"OpusHead" in data[:200]


def describe(data: bytes) -> Spoken:
    """Duration (the last granule, at Opus' 48 kHz, less the pre-skip) and a waveform from page sizes."""
    head = data.find(b"OpusHead")
    pre_skip = int.from_bytes(data[head + 10:head + 12], "little") if head >= 0 else 0
    pages = _pages(data)
    last = max((granule for granule, _ in pages), default=0)
    audio = [size for _, size in pages[2:]] or [0]  # after the OpusHead and OpusTags pages
    step = max(1, len(audio) // WAVEFORM_POINTS)
    points = [max(audio[i:i + step]) for i in range(0, len(audio), step)][:WAVEFORM_POINTS]
    top = max(points) or 1
    waveform = bytes(min(255, round(255 * p / top)) for p in points)
    return Spoken(data, VoiceNote(max(0.0, (last - pre_skip) / 48000), base64.b64encode(waveform).decode()))


async def to_ogg_opus(audio: bytes) -> bytes:
    """Any audio ffmpeg reads, as OGG/Opus (mono, 32 kbit/s: a voice note's size)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-i", "pipe:0", "-vn", "-ac", "1", "-c:a", "libopus",
            "-b:a", "32k", "-f", "ogg", "pipe:1",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except FileNotFoundError:
        raise SpeechFailed("ffmpeg is not installed, and the speech provider did not answer in Opus") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(audio), TRANSCODE_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise SpeechFailed(f"ffmpeg took longer than {TRANSCODE_TIMEOUT:g} s") from None
    if proc.returncode != 0 or not is_ogg_opus(out):
        raise SpeechFailed(f"ffmpeg could not transcode the speech: {err.decode(errors='replace')[-200:]}")
    return out


async def voice_notes(speak: Speak, markdown: str, code_word: str = "(code)") -> list[Spoken]:
    """The answer as voice notes, one per part, in order."""
    text = spoken_text(markdown, code_word)
    notes = []
    for part in split_text(text, MAX_INPUT) if text else []:
        audio, _ = await speak(part)  # the bytes say what they are; a Content-Type may not
        if not is_ogg_opus(audio):  # a WAV, MP3 or raw container: the platforms want Ogg/Opus
            audio = await to_ogg_opus(audio)
        notes.append(describe(audio))
    return notes
