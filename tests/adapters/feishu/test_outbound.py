"""Outbound: cards, CardKit streaming for long answers, its fallbacks, the 30 KB card limit, buttons, threads,
typed failures."""

from __future__ import annotations

import json
import re

import pytest

from bot.adapter import ChatUnavailable, RateLimited
from bot.messages import ButtonPress, ChatRef, ReplyTo, SentRef
from bot.replies import Button, Reply
from tests.adapters.feishu.conftest import VERIFICATION_TOKEN, Harness, StartAdapter
from tests.fakes.feishu_api import RATE_LIMITED
from tests.fakes.feishu_cardkit import CARD_LIMIT
from tests.fakes.feishu_cards import card_error
from tests.fakes.feishu_events import card_action_event

DM = ChatRef("feishu", "oc_dm", None, False, ReplyTo("om_in_1"))


def card_markdown(content: str) -> str:
    return str(json.loads(content)["body"]["elements"][0]["content"])


def platform_calls(h: Harness) -> list[tuple[str, str]]:
    """(method, path) of every call but the token's, the message ids and card ids made generic."""
    calls = [c for c in h.fake.calls if "tenant_access_token" not in c.path and "bot/v3/info" not in c.path]
    return [(c.method, re.sub(r"om_out_\d+", "om", re.sub(r"/7355\d+", "/card", c.path))) for c in calls]


@pytest.fixture
def streams_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every intermediate edit finds the answer running long (in the hub, STREAM_AFTER seconds on)."""
    monkeypatch.setattr("adapters.feishu.outbound.STREAM_AFTER", 0.0)


async def test_a_short_stream_costs_its_send_and_one_final_patch(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("Hel"), final=False)
    await h.adapter.edit(ref, Reply("Hel"), final=False)  # the same text again: nothing to do
    await h.adapter.edit(ref, Reply("Hello world"), final=True)
    assert platform_calls(h) == [("POST", "/open-apis/im/v1/messages"), ("PATCH", "/open-apis/im/v1/messages/om")]
    message = h.fake.messages[ref.message_id]
    assert card_markdown(message["content"]) == "Hello world" and h.fake.cards == {}
    assert json.loads(message["content"])["config"]["streaming_mode"] is False  # no typing cursor left behind


async def test_an_edit_soon_after_the_send_patches_the_card(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("Hel"), final=False)
    await h.adapter.edit(ref, Reply("Hello"), final=False)  # well within STREAM_AFTER of the send
    await h.adapter.edit(ref, Reply("Hello world"), final=True)
    assert h.fake.cards == {} and h.fake.messages[ref.message_id]["updates"] == 2


async def test_a_long_stream_becomes_a_streaming_card_closed_by_its_final_edit_in_one_call(
        start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("Hel"), final=False)
    await h.adapter.edit(ref, Reply("Hello"), final=False)
    ((card_id, entity),) = h.fake.cards.items()
    assert entity.streaming and card_markdown(json.dumps(entity.card)) == "Hello"
    sent = h.fake.messages[ref.message_id]
    assert json.loads(sent["content"]) == {"type": "card", "data": {"card_id": card_id}}  # shows the entity now
    for text in ("Hello wor", "Hello world, and"):
        await h.adapter.edit(ref, Reply(text), final=False)
    assert entity.history == ["Hello wor", "Hello world, and"]  # the typewriter: always the full text
    await h.adapter.edit(ref, Reply("Hello world, and more"), final=True)
    assert not entity.streaming and card_markdown(json.dumps(entity.card)) == "Hello world, and more"
    element = "/open-apis/cardkit/v1/cards/card/elements/answer/content"
    assert platform_calls(h) == [
        ("POST", "/open-apis/im/v1/messages"), ("POST", "/open-apis/cardkit/v1/cards/id_convert"),
        ("PUT", "/open-apis/cardkit/v1/cards/card"), ("PUT", element), ("PUT", element),
        ("PUT", "/open-apis/cardkit/v1/cards/card")]  # the whole card: streaming on, then off with the end
    sequences = [c.body["sequence"] for c in h.fake.requests(path_part=f"/cards/{card_id}")]
    assert sequences == [1, 2, 3, 4]


async def test_the_final_edit_closes_the_stream_even_when_the_text_is_unchanged(
        start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("all"), final=False)
    await h.adapter.edit(ref, Reply("all of it"), final=False)
    await h.adapter.edit(ref, Reply("all of it"), final=True)
    (entity,) = h.fake.cards.values()
    assert not entity.streaming and card_markdown(json.dumps(entity.card)) == "all of it"


async def test_an_edit_after_the_final_one_reopens_streaming(
        start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("think"), final=False)
    await h.adapter.edit(ref, Reply("thinking"), final=False)
    await h.adapter.edit(ref, Reply("thinking"), final=True)
    await h.adapter.edit(ref, Reply("thinking… more"), final=False)
    (entity,) = h.fake.cards.values()
    assert entity.history == ["thinking… more"] and entity.streaming


async def test_a_message_sent_before_a_restart_is_patched_mid_stream(
        start_adapter: StartAdapter, streams_at_once: None) -> None:
    before = await start_adapter()
    ref = await before.adapter.send(DM, Reply("Hel"), final=False)
    await before.adapter.edit(ref, Reply("Hello"), final=False)  # a streaming card when the process died
    after = await start_adapter()
    await after.adapter.edit(ref, Reply("Hello wor"), final=False)  # its entity's sequence is unknown here
    await after.adapter.edit(ref, Reply("Hello world"), final=True)
    assert len(before.fake.requests("POST", "/id_convert")) == 1  # only the first process converted it
    assert card_markdown(before.fake.messages[ref.message_id]["content"]) == "Hello world"


async def test_a_complete_reply_is_one_ordinary_card_and_no_stream(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("the whole answer"))
    assert h.fake.cards == {} and len(h.fake.requests("POST")) == 2  # the token, then the message
    assert card_markdown(h.fake.messages[ref.message_id]["content"]) == "the whole answer"


async def test_cardkit_refused_falls_back_to_patched_card(start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    h.fake.fail("POST", "/cardkit/v1/cards/id_convert", code=99991672, times=None)  # no CardKit permission
    ref = await h.adapter.send(DM, Reply("Hel"), final=False)
    await h.adapter.edit(ref, Reply("Hello"), final=False)
    await h.adapter.edit(ref, Reply("Hello world"), final=True)
    message = h.fake.messages[ref.message_id]
    assert message["msg_type"] == "interactive" and message["updates"] == 2
    assert card_markdown(message["content"]) == "Hello world"
    again = await h.adapter.send(DM, Reply("next"), final=False)
    await h.adapter.edit(again, Reply("next one"), final=False)
    assert len(h.fake.requests("POST", "/id_convert")) == 1  # not asked again for a while


async def test_cards_refused_falls_back_to_text(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.fail("POST", "/im/v1/messages", code=230099, times=1)  # the card message is refused
    ref = await h.adapter.send(DM, Reply("plain **answer**", title="Title"), final=False)
    await h.adapter.edit(ref, Reply("plain **answer**, edited", title="Title"), final=True)
    message = h.fake.messages[ref.message_id]
    assert message["msg_type"] == "text"
    assert json.loads(message["content"]) == {"text": "Title\nplain **answer**, edited"}


async def test_long_cjk_answer_is_split_under_the_card_limit(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    paragraph = "长文本测试" * 200  # 1000 CJK characters, 3000 bytes
    text = "\n\n".join([paragraph] * 24)  # ~72 KB: far over one card
    ref = await h.adapter.send(DM, Reply(text, title="Report"), final=False)
    bodies = [json.loads(m["content"]) for m in h.fake.messages.values()]
    assert len(bodies) >= 3
    assert all(len(json.dumps(b, ensure_ascii=False).encode()) <= CARD_LIMIT for b in bodies)
    shown = "".join(b["body"]["elements"][0]["content"] for b in bodies)
    assert shown.count("长文本测试") == 200 * 24
    assert ref.message_id == list(h.fake.messages)[-1]
    # an edit cannot split: it is cut to fit instead of being refused, as a card and as a streaming card
    await h.adapter.edit(ref, Reply(text), final=False)
    patched = h.fake.messages[ref.message_id]["content"]
    assert card_markdown(patched).endswith("\n…") and len(patched.encode()) <= CARD_LIMIT


async def test_an_edit_of_a_streaming_card_is_cut_to_fit(start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    paragraph = "长文本测试" * 200
    ref = await h.adapter.send(DM, Reply(paragraph), final=False)
    await h.adapter.edit(ref, Reply(paragraph * 2), final=False)  # streaming from here
    await h.adapter.edit(ref, Reply("\n\n".join([paragraph] * 24)), final=False)
    (entity,) = h.fake.cards.values()
    assert entity.history[-1].endswith("\n…") and entity.history[-1].startswith(paragraph)
    assert len(json.dumps(entity.card, ensure_ascii=False).encode()) <= CARD_LIMIT


async def test_buttons_round_trip_and_update_the_card_in_place(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    tree = Reply("1 hi\n└─ 2 hello", title="Tree", monospace=True,
                 buttons=((Button("Go 2", "/goto 2"), Button("New", "/new")),))
    group = ChatRef("feishu", "oc_group1", None, True, ReplyTo("om_in_5"))
    ref = await h.adapter.send(group, tree)
    card = json.loads(h.fake.messages[ref.message_id]["content"])
    assert card["config"]["update_multi"] is True
    assert card_markdown(h.fake.messages[ref.message_id]["content"]).startswith("```\n1 hi")
    buttons = card["body"]["elements"][1]["columns"]
    assert [b["elements"][0]["behaviors"][0]["value"] for b in buttons] == [{"action": "/goto 2"}, {"action": "/new"}]
    assert h.fake.messages[ref.message_id]["reply_to"] == "om_in_5"  # groups quote the question

    await h.post(card_action_event("ev-press", "/goto 2", card_message_id=ref.message_id, token=VERIFICATION_TOKEN))
    (press,) = await h.wait_received(1)
    assert (press.text, press.is_button, press.is_group) == ("/goto 2", True, True)
    assert press.origin == ButtonPress("ev-press", ref.message_id)
    await h.adapter.edit(SentRef(press.chat, ref.message_id), Reply("Moved to 2"), final=True)
    assert "Moved to 2" in card_markdown(h.fake.messages[ref.message_id]["content"])
    again = await h.adapter.send(press.chat, Reply("a reply to a press hangs under the pressed card"))
    assert h.fake.messages[again.message_id]["reply_to"] == ref.message_id


async def test_replies_in_a_topic_stay_in_the_thread(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    topic = ChatRef("feishu", "oc_topics", "omt_1", True, ReplyTo("om_in_topic_msg"))
    ref = await h.adapter.send(topic, Reply("in thread"))
    (call,) = h.fake.requests("POST", "/reply")
    assert call.path == "/open-apis/im/v1/messages/om_in_topic_msg/reply"
    assert call.body["reply_in_thread"] is True
    assert h.fake.messages[ref.message_id]["in_thread"] is True


async def test_platform_failures_are_typed(start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("x"), final=False)
    h.fake.fail("POST", "/cardkit/v1/cards/id_convert", code=99991400, status=429)
    with pytest.raises(RateLimited):
        await h.adapter.edit(ref, Reply("xy"), final=False)
    h.fake.fail("POST", "/im/v1/messages", code=230002)  # the bot was removed from the chat
    with pytest.raises(ChatUnavailable):
        await h.adapter.send(DM, Reply("x"))


async def test_an_expired_token_is_refreshed_once(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.expire_tokens()
    ref = await h.adapter.send(DM, Reply("still works"))
    assert ref.message_id in h.fake.messages
    assert len(h.fake.requests("POST", "tenant_access_token")) == 2


async def test_the_cards_we_render_pass_feishus_card_validation(
        start_adapter: StartAdapter, streams_at_once: None) -> None:
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("**hi**", title="Tree", buttons=((Button("Go", "/goto 1"),),)))
    streamed = await h.adapter.send(DM, Reply("streaming"), final=False)
    await h.adapter.edit(streamed, Reply("streaming, edited"), final=False)
    await h.adapter.edit(streamed, Reply("streaming, edited and done"), final=True)
    await h.adapter.edit(ref, Reply("moved", title="Tree", buttons=((Button("Back", "/goto 0"),),)), final=True)
    assert h.fake.card_errors == []
    assert {m["msg_type"] for m in h.fake.messages.values()} == {"interactive"}


def _button_row_v1(row: tuple[Button, ...]) -> dict[str, object]:
    """Card JSON 1.0's shape: an `action` container with buttons carrying `value` (gone in 2.0)."""
    return {"tag": "action", "actions": [{"tag": "button", "text": {"tag": "plain_text", "content": b.label},
                                          "value": {"action": b.action}} for b in row]}


def _button_without_behaviors(row: tuple[Button, ...]) -> dict[str, object]:
    return {"tag": "column_set", "columns": [{"tag": "column", "elements": [
        {"tag": "button", "text": {"tag": "plain_text", "content": b.label}, "value": {"action": b.action}}]}
        for b in row]}


@pytest.mark.parametrize(("mutation", "attribute", "replacement", "error"), [
    ("1.0 action container", "_button_row", _button_row_v1, card_error("unknown tag", "action")),
    ("button without behaviors", "_button_row", _button_without_behaviors,
     card_error("button needs behaviors in schema 2.0", "behaviors")),
    ("element id starting with a digit", "ANSWER_ELEMENT", "1answer", card_error("invalid element_id", "1answer")),
    ("element id over 20 characters", "ANSWER_ELEMENT", "answer_element_streamed",
     card_error("invalid element_id", "answer_element_streamed")),
])
async def test_a_broken_card_renderer_is_caught_by_the_fake(
        start_adapter: StartAdapter, monkeypatch: pytest.MonkeyPatch, mutation: str, attribute: str,
        replacement: object, error: str) -> None:
    """Mutation of render.py: Feishu refuses the card (230099), the reply degrades to plain text."""
    monkeypatch.setattr(f"adapters.feishu.render.{attribute}", replacement)
    h = await start_adapter()
    ref = await h.adapter.send(DM, Reply("answer", buttons=((Button("Go", "/goto 1"),),)))
    assert h.fake.card_errors[0] == error, mutation
    assert h.fake.messages[ref.message_id]["msg_type"] == "text"


async def test_a_rate_limit_carries_feishus_reset_header_into_retry_after(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.fail("POST", "/im/v1/messages", code=RATE_LIMITED, status=429, reset=7)
    with pytest.raises(RateLimited) as caught:
        await h.adapter.send(DM, Reply("x"))
    assert caught.value.retry_after == 7.0  # from x-ogw-ratelimit-reset, not the 1 s fallback

