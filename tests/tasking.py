"""Holding background tasks' model requests, so a test decides when a sub-agent may answer."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fakes.openai_api import FakeOpenAI


def is_task(body: dict[str, Any]) -> bool:
    """A sub-agent's request: its last user message is the task's prompt, which names the task."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    return bool(users) and str(users[-1]["content"]).startswith("[t")


def hold_tasks(fake: FakeOpenAI) -> asyncio.Event:
    fake.hold, fake.hold_only = asyncio.Event(), is_task
    return fake.hold


def task_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r["body"] for r in fake.requests if is_task(r["body"])]
