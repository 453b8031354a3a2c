"""A background task survives SIGKILL of a real `bothub run` (Telegram against its fake): after the restart its
inbox entry runs it again, the progress message sent before the kill is edited to done, the result is posted once."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import wait_for
from tests.reliability.test_process import running_bot, write_config
from tests.tasking import hold_tasks, task_requests

CHAT = 42


@pytest.mark.timeout(240)  # two `bothub run` processes one after the other, on a loaded machine
async def test_a_task_cut_by_sigkill_finishes_after_the_restart(tmp_path: Path) -> None:
    llm, tg = FakeOpenAI(), FakeTelegram()
    release = hold_tasks(llm)
    for server in (llm, tg):
        await server.start()
    env = tg.env
    try:
        config = write_config(tmp_path)
        async with running_bot(config, llm, env) as bot:
            tg.inject_message(CHAT, "/task weigh the moon")
            await wait_for(lambda: len(task_requests(llm)) == 1, within=60)  # its model request, held
            await wait_for(lambda: any(t.startswith("⏳ Task t1") for t in tg.bot_texts(CHAT)), within=30)
            bot.proc.send_signal(signal.SIGKILL)
            await bot.proc.wait()
        [progress] = [m for m in tg.messages(CHAT) if m.from_bot]
        release.set()
        async with running_bot(config, llm, env):
            await wait_for(lambda: any("[t1] weigh the moon" in t for t in tg.bot_texts(CHAT)), within=60)
            await wait_for(lambda: progress.text.startswith("✅ Task t1 · weigh the moon · done"), within=30)
            await asyncio.sleep(0.5)  # room for a wrong second copy to show
    finally:
        for server in (llm, tg):
            await server.stop()
    texts = tg.bot_texts(CHAT)
    assert len(texts) == 2 and texts[0] == progress.text  # the one progress message, edited in place
    assert texts[1].startswith("Task t1 · weigh the moon") and "[t1] weigh the moon" in texts[1]  # the result, once
    assert len(task_requests(llm)) == 2  # asked again after the restart
