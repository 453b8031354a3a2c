"""Replies when something is off: an edit of a message sent before a restart, an unchanged edit, a stream WeCom
drops mid-answer, a pressed card that cannot take a second answer, media without a fresh req_id, refusals and a
connection that is down."""

from __future__ import annotations

from typing import Any

import pytest

from bot.adapter import OutgoingFile, RateLimited, SendFailed
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Button, Reply
from tests.adapters.wecom.conftest import Make, text
from tests.adapters.wecom.test_outbound import asked
from tests.fakes import wecom_rules
from tests.fakes.wecom_ws import FakeWeCom

REPLIES = ("aibot_respond_msg", "aibot_send_msg")
FILE = OutgoingFile(bytes(range(256)) * 4, "notes.bin", "application/octet-stream")


async def test_an_edit_of_a_message_from_before_a_restart_sends_only_its_final_text(
        make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    gone = SentRef(chat, "stream-from-the-last-run")
    await adapter.edit(gone, Reply("still writing"), final=False)  # type: ignore[attr-defined]
    assert wecom.calls_of(*REPLIES) == []  # its stream is gone: nothing to refresh
    await adapter.edit(gone, Reply("the whole answer"), final=True)  # type: ignore[attr-defined]
    assert wecom.shown("lisi") == ["the whole answer"]


async def test_an_unchanged_edit_sends_nothing(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    ref = await adapter.send(chat, Reply("same"), final=False)  # type: ignore[attr-defined]
    await adapter.edit(ref, Reply("same"), final=False)  # type: ignore[attr-defined]
    assert len(wecom.calls_of(*REPLIES)) == 1
    await adapter.edit(ref, Reply("same"), final=True)  # unchanged, but the stream must be finished
    assert [f.body["stream"]["finish"] for f in wecom.calls_of(*REPLIES)] == [False, True]


@pytest.mark.parametrize("final", [True, False])
async def test_a_stream_wecom_drops_mid_answer_is_followed_by_its_final_text_anew(
        make: Make, wecom: FakeWeCom, final: bool) -> None:
    adapter, chat, _ = await asked(make, wecom)
    ref = await adapter.send(chat, Reply("the first half"), final=False)  # type: ignore[attr-defined]
    wecom.fail("aibot_respond_msg", wecom_rules.STREAM_EXPIRED)
    await adapter.edit(ref, Reply("the first half and the second"), final=final)  # type: ignore[attr-defined]
    if final:
        assert wecom.shown("lisi") == ["the first half", "the first half and the second"]
        return
    assert wecom.shown("lisi") == ["the first half"]  # a draft is not worth a new message
    await adapter.edit(ref, Reply("the end"), final=True)  # type: ignore[attr-defined]
    assert wecom.shown("lisi") == ["the first half", "the end"]


async def pressed(make: Make, wecom: FakeWeCom) -> tuple[Any, ChatRef, SentRef]:
    """A card with a button, and the press of it as the hub gets it."""
    adapter, inbox, _ = await make()
    await wecom.push_message(text("m-card", "show me"))
    asked_in = await inbox.next()
    assert isinstance(asked_in, IncomingMessage)
    card = await adapter.send(asked_in.chat, Reply("pick", buttons=((Button("New", "/new"),),)))
    event = text("m-press", "")
    event.update(msgtype="event", event={"eventtype": "template_card_event", "template_card_event": {
        "card_type": "button_interaction", "event_key": "/new", "task_id": card.message_id}})
    await wecom.push_event(event, task_id=card.message_id)
    press = await inbox.next()
    assert isinstance(press, IncomingMessage) and press.text == "/new"
    return adapter, press.chat, SentRef(press.chat, card.message_id)


async def test_a_pressed_card_takes_one_answer_and_refuses_a_second(make: Make, wecom: FakeWeCom) -> None:
    adapter, _, card = await pressed(make, wecom)
    await adapter.edit(card, Reply("Started a new conversation."), final=True)
    (update,) = wecom.calls_of("aibot_respond_update_msg")
    assert update.errcode == 0 and update.body["template_card"]["task_id"] == card.message_id
    with pytest.raises(SendFailed, match="cannot take this answer"):  # the hub sends it anew
        await adapter.edit(card, Reply("and again"), final=True)
    assert len(wecom.calls_of("aibot_respond_update_msg")) == 1


async def test_media_without_a_fresh_req_id_is_pushed(make: Make, wecom: FakeWeCom) -> None:
    adapter, _, _ = await asked(make, wecom)
    await adapter.files.upload(ChatRef("wecom", "lisi"), FILE)  # type: ignore[attr-defined]
    (push,) = wecom.calls_of("aibot_send_msg")
    assert push.body["msgtype"] == "file" and push.body["chatid"] == "lisi" and push.errcode == 0
    assert wecom.calls_of("aibot_respond_msg") == []  # no reply tried on a req_id it does not have


async def test_media_on_a_req_id_wecom_no_longer_takes_is_pushed(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, rid = await asked(make, wecom)
    wecom.fail("aibot_respond_msg", wecom_rules.INVALID_REQ_ID)
    await adapter.files.upload(chat, FILE)  # type: ignore[attr-defined]
    (tried,) = wecom.calls_of("aibot_respond_msg")
    (push,) = wecom.calls_of("aibot_send_msg")
    assert (tried.req_id, tried.errcode, push.body["msgtype"], push.errcode) == (
        rid, wecom_rules.INVALID_REQ_ID, "file", 0)


@pytest.mark.parametrize(("errcode", "error"), [(wecom_rules.RATE_LIMITED, RateLimited),
                                                 (wecom_rules.BAD_PARAM, SendFailed)])
async def test_an_upload_wecom_refuses_is_a_typed_send_error(
        make: Make, wecom: FakeWeCom, errcode: int, error: type[Exception]) -> None:
    adapter, chat, _ = await asked(make, wecom)
    wecom.fail("aibot_upload_media_init", errcode)
    with pytest.raises(error):
        await adapter.files.upload(chat, FILE)  # type: ignore[attr-defined]
    assert wecom.calls_of(*REPLIES) == []


async def test_a_refusal_with_no_meaning_of_its_own_is_a_send_failure_naming_it(
        make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    wecom.fail(REPLIES, wecom_rules.BAD_PARAM)
    with pytest.raises(SendFailed, match=str(wecom_rules.BAD_PARAM)):
        await adapter.send(chat, Reply("hi"))  # type: ignore[attr-defined]


async def test_sending_and_uploading_while_the_connection_is_down_fail_cleanly(
        make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    wecom.down = 1000  # the gateway refuses every reconnect
    await wecom.drop()
    await wecom.until(lambda: not adapter.connected())
    with pytest.raises(SendFailed, match="long connection is down"):
        await adapter.send(chat, Reply("hello?"))  # type: ignore[attr-defined]
    with pytest.raises(SendFailed, match="long connection is down"):
        await adapter.files.upload(chat, FILE)  # type: ignore[attr-defined]


async def test_a_press_whose_req_id_expired_is_a_send_failure_so_the_hub_sends_anew(
        make: Make, wecom: FakeWeCom) -> None:
    adapter, _, card = await pressed(make, wecom)
    wecom.fail("aibot_respond_update_msg", wecom_rules.INVALID_REQ_ID)
    with pytest.raises(SendFailed, match=str(wecom_rules.INVALID_REQ_ID)):
        await adapter.edit(card, Reply("Started a new conversation."), final=True)
