"""`transcribe_audio`: the text of an audio file in the chat folder, by the provider's /audio/transcriptions.

Registered only with llm.transcription_model set (the model voice messages already use); the meeting-notes skill
needs it. The file is read the jailed way (no links out of the chat folder) and handed to the provider as a copy.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.agent.provider import LLMError
from bot.agent.tools.documents import contents
from bot.agent.tools.files import Refused
from bot.agent.tools.registry import ToolContext, ToolRegistry

Transcribe = Callable[[Path], Awaitable[str]]
MAX_AUDIO = 25 * 2**20  # the transcription endpoint's upload limit


def _copy(workdir: Path, filepath: str, folder: str) -> Path:
    name, data = contents(workdir, filepath)
    if len(data) > MAX_AUDIO:
        raise Refused(f"Error: {name} is over {MAX_AUDIO // 2**20} MB, the most the transcription service takes")
    copy = Path(folder) / name
    copy.write_bytes(data)
    return copy


def register(registry: ToolRegistry, transcribe: Transcribe) -> None:
    async def transcribe_audio(ctx: ToolContext, filepath: str) -> str:
        with tempfile.TemporaryDirectory(prefix="bothub-audio-") as folder:
            try:
                copy = await asyncio.to_thread(_copy, ctx.workdir, filepath, folder)
                text = await transcribe(copy)
            except Refused as e:
                return str(e)
            except LLMError as e:
                return f"Error: the transcription failed ({e.kind})"
        return text.strip() or "(the recording has no speech the service could make out)"

    registry.register(
        "transcribe_audio",
        "The spoken text of an audio or video file in this chat's folder (e.g. a recording sent under uploads/).",
        {"type": "object", "properties": {"filepath": {"type": "string", "description": "Path in this chat's folder"}},
         "required": ["filepath"]},
        transcribe_audio,
    )
