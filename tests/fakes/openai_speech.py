"""The fake provider's `/v1/audio/speech` (OpenAI's text-to-speech wire): JSON in, audio bytes out.

Strict like the real one: a bearer key, `model`, `input` (1 to 4 096 characters) and a known `voice` are
required, `response_format` is one of the documented six (default mp3). The audio is real — a tone made by
ffmpeg, as long as the text would take to say — so what the bot posts can be checked by a real decoder.
`answers_in` makes it answer in another format than asked (a local engine that only writes WAV).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.openai_rules import Refusal, check_key

VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse"})
FORMATS = {"mp3": ("mp3", "audio/mpeg"), "opus": ("ogg", "audio/ogg"), "aac": ("adts", "audio/aac"),
           "flac": ("flac", "audio/flac"), "wav": ("wav", "audio/wav"), "pcm": ("s16le", "audio/pcm")}
CODECS = {"ogg": ["-c:a", "libopus"], "mp3": ["-c:a", "libmp3lame"]}
SECONDS_PER_CHAR = 0.02


async def tone(seconds: float, container: str) -> bytes:
    """`seconds` of a 440 Hz tone in `container`, made by ffmpeg."""
    proc = await asyncio.create_subprocess_exec(
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}",
        "-ac", "1", *CODECS.get(container, []), "-f", container, "pipe:1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out


@dataclass
class FakeSpeech:
    api_key: str | None  # the fake provider's key (None: any key)
    refuse: Any  # a Refusal → the provider's error response
    answers_in: str | None = None  # None: the format asked for
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: list[bytes] = field(default_factory=list)
    fail_with: int | None = None  # answer this HTTP status instead

    async def handle(self, request: web.Request) -> web.Response:
        if refusal := check_key(request.headers.get("Authorization"), self.api_key):
            return self.refuse(refusal)
        body = await request.json()
        text, fmt = body.get("input"), body.get("response_format", "mp3")
        if not isinstance(body.get("model"), str) or not isinstance(text, str) or not 1 <= len(text) <= 4096:
            return self.refuse(Refusal(400, "'model' and 'input' (1 to 4096 characters) are required"))
        if body.get("voice") not in VOICES or fmt not in FORMATS:
            return self.refuse(Refusal(400, f"unknown voice {body.get('voice')!r} or format {fmt!r}"))
        self.requests.append(body)
        if self.fail_with is not None:
            return self.refuse(Refusal(self.fail_with, "speech failed"))
        container, content_type = FORMATS[self.answers_in or fmt]
        audio = await tone(round(max(0.3, len(text) * SECONDS_PER_CHAR), 2), container)
        self.served.append(audio)
        return web.Response(body=audio, content_type=content_type)
