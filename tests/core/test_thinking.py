"""Thinking mode through the whole app: reasoning a provider streams (`reasoning_content`) never becomes the
stored answer; with `llm.show_thinking` the chat sees it quoted before the answer; the trace keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI, Think
from tests.harness import RecordingAdapter, running_app


@pytest.mark.parametrize(("shown", "chat_text"), [
    (False, "It is four."),
    (True, "> Two plus two.\n> That is four.\n\nIt is four."),
])
async def test_reasoning_is_kept_out_of_the_answer_and_stored_in_the_trace(
        tmp_path: Path, fake: FakeOpenAI, shown: bool, chat_text: str) -> None:
    rec = RecordingAdapter()
    fake.script(Think("Two plus two.\nThat is four.", "It is four."))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,),
                           config={"llm": {"show_thinking": shown}}) as app:
        await rec.say("what is 2+2?")
        await app.hub.idle()
        await app.traces.drain()
        assert rec.texts() == [chat_text]
        answer = app.lanes.session(SessionKey("recording", "c1")).path[-1]
        trace = await app.store.traces.get("recording:c1", answer.trace_id or "")
    assert (answer.role, answer.content) == ("assistant", "It is four.")  # the model never sees it again
    assert trace is not None and trace.steps[0].reasoning == "Two plus two.\nThat is four."
