"""Shared fixtures. Everything listens on 127.0.0.1 port 0."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.openai_api import FakeOpenAI


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server; with an empty script it echoes the last user message."""
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()
