"""Thinking mode through the whole app: reasoning a provider streams (`reasoning_content`) never becomes the
stored answer; with thinking on (`llm.show_thinking`, or `/think on` in the chat) the chat's reply carries it as
its folded reasoning part, apart from the text; the trace keeps it either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI, Think
from tests.harness import RecordingAdapter, running_app

REASONING = "Two plus two.\nThat is four."


def last_reply(rec: RecordingAdapter) -> tuple[str, str]:
    reply = list(rec.visible.values())[-1][1]
    return reply.text, reply.reasoning


@pytest.mark.parametrize("shown", [False, True])
async def test_reasoning_is_kept_out_of_the_answer_and_stored_in_the_trace(
        tmp_path: Path, fake: FakeOpenAI, shown: bool) -> None:
    rec = RecordingAdapter()
    fake.script(Think(REASONING, "It is four."))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,),
                           config={"llm": {"show_thinking": shown}}) as app:
        await rec.say("what is 2+2?")
        await app.hub.idle()
        await app.traces.drain()
        assert last_reply(rec) == ("It is four.", REASONING if shown else "")
        answer = app.lanes.session(SessionKey("recording", "c1")).path[-1]
        trace = await app.store.traces.get("recording:c1", answer.trace_id or "")
    assert (answer.role, answer.content) == ("assistant", "It is four.")  # the model never sees it again
    assert trace is not None and trace.steps[0].reasoning == REASONING
    assert trace.steps[0].completion_tokens == 3  # the fake counts the thinking's pieces with the answer's


async def test_think_on_and_off_per_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(Think(REASONING, "It is four."), Think(REASONING, "Still four."))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("/think")
        await app.hub.idle()
        assert rec.texts()[-1] == "Thinking mode is off here. /think on or /think off changes it."
        await rec.say("/think on")
        await rec.say("what is 2+2?")
        await app.hub.idle()
        assert last_reply(rec) == ("It is four.", REASONING)
        await rec.say("/lang zh")
        await rec.say("/think off")
        await app.hub.idle()
        assert rec.texts()[-1] == "本聊天的思考模式现在已关闭。"
        await rec.say("and again?")
        await app.hub.idle()
        assert last_reply(rec) == ("Still four.", "")
        await rec.say("/think maybe")
        await app.hub.idle()
        assert "/think [on|off]" in rec.texts()[-1]
