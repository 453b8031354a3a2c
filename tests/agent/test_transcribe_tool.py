"""`transcribe_audio` through the registry, with the real transcriber posting to the fake provider's
/audio/transcriptions: the jailed file goes up as it is, refusals never reach the provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.agent.events import FailureKind
from bot.agent.tools import transcribe
from bot.agent.tools.files import OUTSIDE
from bot.agent.tools.registry import ToolContext, ToolRegistry
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import API_KEY, FakeOpenAI

MODEL = "whisper-test"
RECORDING = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(256)) * 4


async def registry(make_llm: MakeLLM, api_key: str = API_KEY) -> ToolRegistry:
    llm = await make_llm(api_key=api_key)
    transcriber = llm.transcriber(MODEL)
    assert transcriber is not None
    tools = ToolRegistry()
    transcribe.register(tools, transcriber)
    return tools


async def run(tools: ToolRegistry, ctx: ToolContext, filepath: str) -> str:
    return await tools.execute("transcribe_audio", json.dumps({"filepath": filepath}), ctx)


@pytest.fixture
def recording(ctx: ToolContext) -> Path:
    path = ctx.workdir / "uploads" / "standup.wav"
    path.parent.mkdir(parents=True)
    path.write_bytes(RECORDING)
    return path


async def test_a_recording_in_the_folder_is_sent_as_it_is_and_its_text_comes_back(
        make_llm: MakeLLM, fake: FakeOpenAI, ctx: ToolContext, recording: Path) -> None:
    fake.transcript = "  we ship on friday  "
    assert await run(await registry(make_llm), ctx, "uploads/standup.wav") == "we ship on friday"
    assert fake.transcriptions == [{"model": MODEL, "filename": "standup.wav", "data": RECORDING}]


async def test_silence_is_said_to_be_silence(make_llm: MakeLLM, fake: FakeOpenAI, ctx: ToolContext,
                                             recording: Path) -> None:
    fake.transcript = " "
    assert await run(await registry(make_llm), ctx, "uploads/standup.wav") == (
        "(the recording has no speech the service could make out)")


async def test_a_missing_or_outside_file_is_refused_before_the_provider_is_asked(
        make_llm: MakeLLM, fake: FakeOpenAI, ctx: ToolContext, recording: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.wav").write_bytes(RECORDING)
    (ctx.workdir / "out.wav").symlink_to(tmp_path / "secret.wav")
    tools = await registry(make_llm)
    assert await run(tools, ctx, "uploads/nothing.wav") == "Error: no file 'uploads/nothing.wav' in this chat's folder"
    assert await run(tools, ctx, "../secret.wav") == OUTSIDE
    assert await run(tools, ctx, "out.wav") == OUTSIDE
    assert fake.transcriptions == []


async def test_a_file_over_the_upload_limit_is_refused(make_llm: MakeLLM, fake: FakeOpenAI, ctx: ToolContext,
                                                       recording: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcribe, "MAX_AUDIO", len(RECORDING) - 1)
    result = await run(await registry(make_llm), ctx, "uploads/standup.wav")
    assert result.startswith("Error: standup.wav is over ") and result.endswith("the transcription service takes")
    assert fake.transcriptions == []


async def test_a_provider_refusal_is_a_short_error_for_the_model(make_llm: MakeLLM, fake: FakeOpenAI,
                                                                 ctx: ToolContext, recording: Path) -> None:
    result = await run(await registry(make_llm, api_key="not-the-key"), ctx, "uploads/standup.wav")
    assert result == f"Error: the transcription failed ({FailureKind.AUTH.value})"
    assert fake.transcriptions == []
