"""Webhook transport: envelopes opened and events routed by the adapter, pushed like Feishu pushes them."""

from __future__ import annotations

import json

from bot.messages import Attachment, IncomingMessage, Overheard
from bot.replies import Reply
from tests.adapters.feishu.conftest import ENCRYPT_KEY, VERIFICATION_TOKEN, StartAdapter
from tests.fakes.feishu_api import BOT_OPEN_ID
from tests.fakes.feishu_events import card_action_event, menu_event, message_event, signed_request

AT_BOT = (("@_user_1", BOT_OPEN_ID, "Hub"),)


async def test_url_verification_answers_the_challenge(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    body, headers = signed_request(
        ENCRYPT_KEY, {"challenge": "ch-42", "token": VERIFICATION_TOKEN, "type": "url_verification"}
    )
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers=headers) as resp:
        assert resp.status == 200
        assert await resp.json() == {"challenge": "ch-42"}
    assert h.adapter.connected()


async def test_bad_signature_or_token_is_rejected_and_not_delivered(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    event = message_event("ev-forged", chat_type="p2p", token=VERIFICATION_TOKEN)
    body, headers = signed_request(ENCRYPT_KEY, event)
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers={**headers, "X-Lark-Signature": "0" * 64}) as resp:
        assert resp.status == 401
    wrong_token = message_event("ev-wrong-token", chat_type="p2p", token="not-the-token")
    assert (await h.post(wrong_token)).status == 401
    await h.adapter.stop()  # quiescent: events taken in reach the hub first, nothing more can arrive
    assert h.received == []


async def test_unhandled_event_type_is_acknowledged(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    event = message_event("ev-other", token=VERIFICATION_TOKEN)
    event["header"]["event_type"] = "im.chat.member.bot.added_v1"
    resp = await h.post(event)
    assert resp.status == 200
    await h.adapter.stop()  # quiescent: events taken in reach the hub first, nothing more can arrive
    assert h.received == []


async def test_redelivered_event_reaches_the_hub_once(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    event = message_event("ev-1", chat_type="p2p", chat_id="oc_p2p", text="hi", token=VERIFICATION_TOKEN)
    for _ in range(3):
        assert (await h.post(event)).status == 200
    await h.wait_received(1)
    await h.adapter.stop()  # quiescent: events taken in reach the hub first, nothing more can arrive
    assert len(h.received) == 1
    msg = h.received[0]
    assert (msg.chat_id, msg.message_id, msg.text, msg.is_group, msg.mentioned) == (
        "oc_p2p", "om_in_ev-1", "hi", False, True
    )
    assert "feishu:event:ev-1" in h.seen_keys


async def test_group_mentions(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    await h.post(message_event("ev-plain", text="just chatting", token=VERIFICATION_TOKEN))
    await h.post(message_event("ev-all", text="@_all look", mentions=(("@_all", "", "所有人"),),
                               token=VERIFICATION_TOKEN))
    await h.post(message_event("ev-bot", text="@_user_1 what is 2+2? cc @_user_2",
                               mentions=(*AT_BOT, ("@_user_2", "ou_ann", "Ann")), token=VERIFICATION_TOKEN))
    plain, at_all, at_bot = await h.wait_received(3)
    assert isinstance(plain, Overheard) and isinstance(at_all, Overheard)  # group context, never addressed
    assert (plain.chat_id, plain.user_name, plain.text) == ("oc_group1", "ou_user1", "just chatting")
    assert at_all.text == "@所有人 look"
    assert isinstance(at_bot, IncomingMessage)
    assert (at_bot.mentioned, at_bot.text) == (True, "what is 2+2? cc @Ann")
    assert at_bot.user_id == "ou_user1"


async def test_post_is_read_as_text_and_topics_keep_their_thread(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    post = {"title": "Plan", "content": [
        [{"tag": "at", "user_id": "@_user_1", "user_name": "Hub"}, {"tag": "text", "text": " step one "},
         {"tag": "a", "text": "docs", "href": "https://example.com"}],
        [{"tag": "text", "text": "step two"}, {"tag": "img", "image_key": "img_x"}],
    ]}
    event = message_event("ev-post", message_type="post", content=post, mentions=AT_BOT,
                          thread_id="omt_topic1", token=VERIFICATION_TOKEN)
    await h.post(event)
    (msg,) = await h.wait_received(1)
    assert msg.text == "Plan\n step one docs\nstep two"
    assert (msg.mentioned, msg.thread_id) == (True, "omt_topic1")


async def test_non_text_message_arrives_empty_with_an_attachment(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    event = message_event("ev-img", chat_type="p2p", message_type="image",
                          content={"image_key": "img_v2_x"}, token=VERIFICATION_TOKEN)
    await h.post(event)
    (msg,) = await h.wait_received(1)
    image = Attachment(kind="image", name="image", handle="om_in_ev-img/img_v2_x/image")
    assert (msg.text, msg.attachments) == ("", (image,))


async def test_messages_from_bots_and_malformed_events_are_skipped(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    await h.post(message_event("ev-app", chat_type="p2p", sender_type="app", token=VERIFICATION_TOKEN))
    broken = message_event("ev-broken", chat_type="p2p", token=VERIFICATION_TOKEN)
    broken["event"]["message"]["content"] = "{not json"
    del broken["event"]["message"]["chat_id"]
    assert (await h.post(broken)).status == 200
    await h.post(message_event("ev-ok", chat_type="p2p", text="after", token=VERIFICATION_TOKEN))
    (msg,) = await h.wait_received(1)
    await h.adapter.stop()  # quiescent: events taken in reach the hub first, nothing more can arrive
    assert [m.text for m in h.received] == ["after"]
    assert msg.message_id == "om_in_ev-ok"


async def test_card_button_press_toasts_and_reaches_the_hub_as_a_command(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.chat_modes["oc_dm"] = "p2p"
    event = card_action_event("ev-press-1", "/goto 7", card_message_id="om_card_x", chat_id="oc_dm",
                              token=VERIFICATION_TOKEN)
    body, headers = signed_request(ENCRYPT_KEY, event)
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers=headers) as resp:
        assert resp.status == 200
        answer = json.loads(await resp.read())
    assert answer["toast"]["content"] == "Running /goto 7"
    (msg,) = await h.wait_received(1)
    assert (msg.text, msg.is_button, msg.mentioned, msg.message_id) == ("/goto 7", True, True, "ev-press-1")
    assert (msg.chat_id, msg.is_group) == ("oc_dm", False)


async def test_the_bots_menu_runs_its_event_key_as_a_command_in_the_users_own_chat(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    await h.post(menu_event("ev-menu-1", "tree", token=VERIFICATION_TOKEN))  # before the user ever wrote
    (first,) = await h.wait_received(1)
    assert (first.text, first.chat_id, first.user_id, first.is_group, first.mentioned) == (
        "/tree", "ou_user1", "ou_user1", False, True)
    await h.adapter.send(first.chat, Reply("the tree"))
    assert h.fake.requests("POST", "/im/v1/messages")[-1].query["receive_id_type"] == "open_id"
    await h.post(message_event("ev-dm", chat_type="p2p", chat_id="oc_dm_ann", text="hi", token=VERIFICATION_TOKEN))
    await h.post(menu_event("ev-menu-2", "new", token=VERIFICATION_TOKEN))
    _, _, again = await h.wait_received(3)
    assert (again.text, again.chat_id) == ("/new", "oc_dm_ann")  # the same session as the user's messages
    await h.post(menu_event("ev-menu-3", "Not A Command!", token=VERIFICATION_TOKEN))
    await h.post(menu_event("ev-menu-2", "new", token=VERIFICATION_TOKEN))  # a redelivery
    await h.post(message_event("ev-marker", chat_type="p2p", chat_id="oc_dm_ann", text="marker",
                               token=VERIFICATION_TOKEN))
    await h.wait_received(4)
    assert [m.text for m in h.received] == ["/tree", "hi", "/new", "marker"]
