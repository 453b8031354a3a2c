"""Taking events in when something is off: the adapter not started, events it cannot read, a hub that fails,
redelivered presses, a hub that hangs at stop, and a bot whose identity has no open_id."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from adapters.feishu.adapter import STOP_GRACE
from adapters.feishu.frames import DATA, Frame
from bot.messages import Overheard
from tests.adapters.feishu.conftest import ENCRYPT_KEY, VERIFICATION_TOKEN, StartAdapter, eventually
from tests.fakes.feishu_api import BOT_OPEN_ID, FakeFeishu
from tests.fakes.feishu_events import card_action_event, message_event, signed_request

MENTION = (("@_user_1", BOT_OPEN_ID, "Hub"),)


def dm(event_id: str, **kwargs: object) -> dict[str, object]:
    return message_event(event_id, chat_type="p2p", token=VERIFICATION_TOKEN, **kwargs)  # type: ignore[arg-type]


async def test_a_webhook_push_after_stop_is_answered_503_so_feishu_retries(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    await h.adapter.stop()
    assert (await h.post(dm("ev-late"))).status == 503
    assert h.received == [] and h.seen_keys == set()  # not marked seen: the retry is taken in


async def test_a_press_without_its_card_context_is_acknowledged_and_dropped(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    press = card_action_event("ev-press-bare", "/new", card_message_id="", token=VERIFICATION_TOKEN)
    body, headers = signed_request(ENCRYPT_KEY, press)
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers=headers) as resp:
        assert (resp.status, json.loads(await resp.read())) == (200, {"msg": "success"})  # no toast: nothing runs
    await h.post(dm("ev-after-press", text="next"))
    await h.wait_received(1)
    assert [m.text for m in h.received] == ["next"]


async def test_an_event_that_breaks_the_parser_is_skipped_and_the_next_one_arrives(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    post = {"zh_cn": {"title": "", "content": [[{"tag": "code_block", "language": 5, "text": "x"}]]}}
    assert (await h.post(dm("ev-bad-post", message_type="post", content=post))).status == 200
    await h.post(dm("ev-fine", text="fine"))
    await h.wait_received(1)
    await h.adapter.stop()
    assert [m.text for m in h.received] == ["fine"]


async def test_a_post_in_a_locale_wrapper_reads_as_text_with_its_code_emoji_and_images(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    post = {"en_us": {"title": "Log", "content": [
        [{"tag": "text", "text": "see "}, {"tag": "emotion", "emoji_type": "SMILE"}, {"tag": "hr"}],
        [{"tag": "code_block", "language": "PYTHON", "text": "print(1)"}],
        [{"tag": "img", "image_key": "img_1"}, {"tag": "img"}],
        "not a paragraph",
    ]}}
    await h.post(dm("ev-post", message_type="post", content=post))
    (msg,) = await h.wait_received(1)
    assert msg.text == "Log\nsee :SMILE:\n\n```python\nprint(1)\n```"
    assert [(a.kind, a.handle) for a in msg.attachments] == [("image", "om_in_ev-post/img_1/image"), ("image", "")]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
async def test_a_text_message_with_unreadable_content_arrives_empty(start_adapter: StartAdapter, content: str) -> None:
    h = await start_adapter()
    event = dm("ev-odd")
    event["event"]["message"]["content"] = content  # type: ignore[index]
    await h.post(event)
    (msg,) = await h.wait_received(1)
    assert (msg.text, msg.message_id) == ("", "om_in_ev-odd")


async def test_a_long_connection_event_that_is_not_json_is_acknowledged_and_skipped(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    frame = Frame(service=7, method=DATA, headers=[("type", "event"), ("message_id", "m-x")], payload=b"{not json")
    await h.fake.push_ws_raw(frame.encode())
    await h.fake.push_ws_raw(Frame(service=7, method=DATA, headers=[("type", "event")], payload=b"[]").encode())
    await eventually(lambda: len(h.fake.ws_acks) == 2)
    assert h.fake.ws_acks == [{"code": 200}] * 2  # no answer; a 500 would only bring the same bytes back
    assert h.received == []


async def test_an_event_not_kept_is_answered_503_and_taken_when_feishu_sends_it_again(
        start_adapter: StartAdapter, caplog: pytest.LogCaptureFixture) -> None:
    """The hub could not store a message or a press (NotKept): no 200, and the retry is not dropped as seen.
    Overheard group talk is no promise (nothing answers it): its failure is logged and acknowledged."""
    h = await start_adapter()
    h.fake.chat_modes["oc_dm"] = "p2p"
    h.hub_fails = True
    press = card_action_event("ev-press-fail", "/new", card_message_id="om_c", chat_id="oc_dm",
                              token=VERIFICATION_TOKEN)
    with caplog.at_level(logging.ERROR, "adapters.feishu.adapter"):
        assert (await h.post(dm("ev-fail"))).status == 503
        assert (await h.post(message_event("ev-talk", token=VERIFICATION_TOKEN))).status == 200  # overheard
        assert (await h.post(press)).status == 503
    assert "webhook event not kept" in caplog.text
    assert "keeping group message om_in_ev-talk as context failed" in caplog.text
    assert h.seen_keys == set()
    h.hub_fails = False
    assert (await h.post(dm("ev-fail", text="back"))).status == 200  # Feishu's retries
    assert (await h.post(press)).status == 200
    assert [m.text for m in await h.wait_received(2)] == ["back", "/new"]


async def test_a_long_connection_event_not_kept_is_answered_500_and_taken_when_pushed_again(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    h.hub_fails = True
    await h.fake.push_ws_event(dm("ws-fail", text="first try"))
    await eventually(lambda: len(h.fake.ws_acks) == 1)
    assert h.fake.ws_acks == [{"code": 500}]  # Feishu pushes it again
    h.hub_fails = False
    await h.fake.push_ws_event(dm("ws-fail", text="first try"))
    (msg,) = await h.wait_received(1)
    assert msg.text == "first try"
    await eventually(lambda: len(h.fake.ws_acks) == 2)
    assert h.fake.ws_acks[1] == {"code": 200}


async def test_a_redelivered_press_is_toasted_again_but_reaches_the_hub_once(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.chat_modes["oc_dm"] = "p2p"
    press = card_action_event("ev-press-twice", "/tree", card_message_id="om_c2", chat_id="oc_dm",
                              token=VERIFICATION_TOKEN)
    await h.post(press)
    await h.post(press)  # Feishu retried: our first answer was late
    await h.adapter.stop()
    assert [m.text for m in h.received] == ["/tree"]


async def test_stop_gives_a_hanging_hub_its_grace_then_cancels(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    h.admit.clear()  # the hub never takes the event in
    await h.fake.push_ws_event(message_event("ws-hang", chat_type="p2p", text="stuck"))
    await eventually(lambda: bool(h.adapter._tasks))
    started = time.monotonic()
    await h.adapter.stop()
    assert STOP_GRACE <= time.monotonic() - started < STOP_GRACE + 2
    assert h.adapter._tasks == set() and h.received == [] and h.fake.ws_acks == []  # unacked: Feishu redelivers
    assert h.seen_keys == set()  # and the redelivery is taken, not dropped as seen


async def test_a_bot_without_an_open_id_is_warned_about_and_hears_group_talk_only(
        fake: FakeFeishu, start_adapter: StartAdapter, caplog: pytest.LogCaptureFixture) -> None:
    fake.open_id = ""
    with caplog.at_level(logging.WARNING, "adapters.feishu.adapter"):
        h = await start_adapter()
    assert "gave no open_id; @mentions in groups will not be recognised" in caplog.text
    await h.post(message_event("ev-at", text="@_user_1 hi", mentions=(("@_user_1", "", "Hub"),),
                               token=VERIFICATION_TOKEN))
    await h.post(dm("ev-dm", text="direct"))
    await h.wait_received(1)
    await asyncio.sleep(0.1)
    talk, direct = h.received
    assert isinstance(talk, Overheard) and talk.text == "@Hub hi"  # kept as talk, not a message to answer
    assert (direct.text, direct.mentioned) == ("direct", True)



async def test_a_press_in_a_chat_feishu_will_not_describe_is_taken_as_a_group_and_asked_about_once(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.fail("GET", "/im/v1/chats/", 232011, status=400, times=None)  # e.g. the bot left the chat
    for n in (1, 2):
        await h.post(card_action_event(f"ev-press-unknown-{n}", "/tree", card_message_id="om_old", chat_id="oc_gone",
                                       token=VERIFICATION_TOKEN))
    first, second = await h.wait_received(2)
    assert (first.is_group, first.thread_id, second.is_group) == (True, None, True)  # a reply then quotes the card
    assert len(h.fake.requests("GET", "/im/v1/chats/oc_gone")) == 2  # not known yet, so asked again: no guess kept
    h.fake._failures.clear()
    h.fake.chat_modes["oc_gone"] = "p2p"
    for n in (3, 4):
        await h.post(card_action_event(f"ev-press-unknown-{n}", "/tree", card_message_id="om_old", chat_id="oc_gone",
                                       token=VERIFICATION_TOKEN))
    *_, third, fourth = await h.wait_received(4)
    assert (third.is_group, fourth.is_group) == (False, False)
    assert len(h.fake.requests("GET", "/im/v1/chats/oc_gone")) == 3  # known now: asked once more, then kept
