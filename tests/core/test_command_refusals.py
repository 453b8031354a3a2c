"""Commands asked for what is not there or typed wrong, through the hub: each answers in a sentence or its usage
line and changes nothing (nothing to stop, no standing approvals, no tasks yet, a task that already ended)."""

from __future__ import annotations

from pathlib import Path

from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for

CONFIG = {"llm": {"allowed_models": ["fake-model", "other-model"]}}


async def test_commands_for_what_is_not_there_or_typed_wrong(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    asked = {
        "/stop": t("en", "nothing_to_stop"),
        "/pair nonsense": "Usage: /pair approve <CODE>",
        "/approve a1 once for-ever": "Usage: /approve [id] [once|conv|always]",
        "/approvals": t("en", "approvals_none"),
        "/approvals revoke all": "Usage: /approvals [revoke <n>]",
        "/model": t("en", "model_current", model="fake-model", allowed="fake-model, other-model"),
        "/tasks": t("en", "tasks_none"),
        "/task": "Usage: /task <prompt>",
    }
    async with running_app(tmp_path, fake.base_url, config=CONFIG, adapters=(rec,)) as app:
        for command in asked:
            await rec.say(command)
            await app.hub.idle()
        assert rec.texts() == list(asked.values())
        assert await app.store.tasks.recent("recording:c1") == [] and fake.requests == []


async def test_cancelling_a_task_that_already_ended_says_so(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("/task name three owls")
        await wait_for(lambda: any(text.startswith("**Task t1**") for text in rec.texts()))
        await wait_for(lambda: not app.lanes.active())
        await rec.say("/cancel t1")
        await wait_for(lambda: rec.texts()[-1] == t("en", "task_ended_already", id="t1",
                                                      state=t("en", "tasks_state_done")))
        task = await app.store.tasks.get("recording:c1", 1)
        assert task is not None and task.state == "done"
