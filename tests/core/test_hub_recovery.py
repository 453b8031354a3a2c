"""Regressions: a chat recovers from a stop mid-tool, a blocked chat that returns, and a restart with a queue."""

from __future__ import annotations

from pathlib import Path

from bot.adapter import ChatUnavailable
from bot.chats.sessions import SessionKey
from bot.hub.inbox import decode_message, encode_message
from bot.messages import (
    Attachment,
    AttachmentKind,
    ButtonPress,
    ChatRef,
    IncomingMessage,
    Interaction,
    ReplyTo,
    SentRef,
)
from bot.replies import Reply
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for


async def test_stop_while_a_tool_waits_does_not_break_the_conversation(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"tools": {"shell_enabled": True}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,)) as app:
        fake.script(ToolCalls([("call_1", "shell", '{"command": "ls"}')]))
        await rec.say("list my files")
        await wait_for(lambda: any("/approve" in str(r.buttons) for _, r in rec.sent))  # waiting for approval
        await rec.say("/stop")
        await app.hub.idle()
        session = app.lanes.session(SessionKey("recording", "c1"))
        assert session.path[-1].tool_calls  # the call was stored, its result never came
        await rec.say("never mind, just say hi")
        await wait_for(lambda: rec.texts()[-1] == "never mind, just say hi")
    sent = fake.requests[-1]["body"]["messages"]
    tool_results = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["call_1"]  # answered as "not run", so the API accepts it


class BlockingOnce(RecordingAdapter):
    """A platform that refuses the first message (the user had blocked the bot), then works again."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 1

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        if self.refusals:
            self.refusals -= 1
            raise ChatUnavailable("Forbidden: bot was blocked by the user")
        return await super().send(chat, reply, final=final)


async def test_a_chat_that_blocked_the_bot_is_answered_again_when_it_returns(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = BlockingOnce()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text("nobody sees this"))
        await rec.say("first")
        await app.hub.idle()
        assert rec.texts() == []
        await rec.say("I unblocked you")
        await wait_for(lambda: rec.texts() == ["I unblocked you"])


async def test_queued_messages_cut_by_a_restart_are_answered_after_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The durable inbox: nothing queued at shutdown is lost or asks the user to resend; nothing is answered twice."""
    slow = FakeOpenAI(first_token_delay=5.0)
    await slow.start()
    rec = RecordingAdapter()
    try:
        async with running_app(tmp_path, slow.base_url, config={"shutdown_grace": 0.2}, adapters=(rec,)):
            for text in ("one", "two", "three"):
                await rec.say(text)
            await wait_for(lambda: len(slow.requests) == 1)
    finally:
        await slow.stop()
    assert [t for t in rec.texts() if "interrupted" not in t] == []  # the running answer says it was cut
    again = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(again,)) as app:
        await wait_for(lambda: len(again.texts()) == 3)
        await again.say("two", message_id="in2")  # a redelivery of an entry already taken over
        await app.hub.idle()
        assert await app.store.inbox.unfinished() == []
        opened = await app.store.conversations.open_chat(SessionKey("recording", "c1").storage_key)
    assert again.texts() == ["one", "two", "three"]
    assert [r["body"]["messages"][-1]["content"] for r in fake.requests] == ["one", "two", "three"]
    assert [m.content for m in opened.path if m.role == "user"] == ["one", "two", "three"]  # each stored once

def test_an_inbox_event_round_trips_every_field() -> None:
    for origin in (None, ReplyTo("m1"), ButtonPress("p1", None), ButtonPress("p2", "m9"), Interaction("i1")):
        msg = IncomingMessage("discord", "c1", "t1", "m1", "u1", "Ann 安", True, True, "/goto 7", reply_to="m0",
                              attachments=tuple(Attachment(kind, f"a.{kind}") for kind in AttachmentKind),
                              origin=origin)
        decoded = decode_message(encode_message(msg))
        assert decoded == msg and all(type(a.kind) is AttachmentKind for a in decoded.attachments)


def test_a_stored_attachment_kind_this_version_does_not_know_is_other() -> None:
    msg = IncomingMessage("discord", "c1", None, "m1", "u1", "Ann", False, True, "",
                          attachments=(Attachment("hologram"),))  # type: ignore[arg-type]
    assert decode_message(encode_message(msg)).attachments == (Attachment(AttachmentKind.OTHER),)


async def test_a_message_arriving_while_the_hub_shuts_down_is_answered_after_the_restart(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    """A poller or webhook still taking events during the shutdown grace confirms them to the platform: the
    hub keeps them in the inbox instead of dropping them."""
    first = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(first,)) as app:
        await app.hub.shutdown(0)
        await first.say("arrived late", "late")
        assert first.texts("late") == [] and not fake.requests
    again = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(again,)):
        await wait_for(lambda: again.texts("late") == ["arrived late"])
