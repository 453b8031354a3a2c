"""Replies onto the fake: AI cards streamed in place, the Markdown dialect, the fallback to the session webhook
and the robot OpenAPI where cards are refused, and DingTalk's per-group limit."""

from __future__ import annotations

import json

import pytest

from adapters.dingtalk import render
from bot.adapter import RateLimited
from bot.delivery import Delivery
from bot.messages import ChatRef, ReplyTo
from bot.replies import Button, Reply
from tests.adapters.dingtalk.conftest import Make
from tests.fakes.dingtalk_api import APP_QPS, GROUP_PER_MINUTE, FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC

NO_CARDS = "Forbidden.AccessDenied.AccessTokenPermissionDenied"  # the app lacks Card.Instance.Write


async def dm(make: Make, dingtalk: FakeDingTalk, *, webhook_ms: int = 5_400_000) -> tuple[object, ChatRef]:
    adapter, inbox, _ = await make()
    data = dingtalk.robot_frame({"msgId": "msg-1", "conversationType": "1", "conversationId": "cid-1",
                                 "senderStaffId": "staff-ann", "msgtype": "text", "text": {"content": "hi"}})
    data["sessionWebhook"], data["sessionWebhookExpiredTime"] = dingtalk.open_webhook("staff-ann", webhook_ms)
    await dingtalk.until_acked(await dingtalk.push(ROBOT_TOPIC, data))
    return adapter, (await inbox.next()).chat


async def test_a_stream_opens_inputting_streams_and_finishes_in_one_call(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    ref = await adapter.send(chat, Reply("Hel"), final=False)
    assert dingtalk.cards[ref.message_id].params["flowStatus"] == render.INPUTING
    await adapter.edit(ref, Reply("Hello"), final=False)
    await adapter.edit(ref, Reply("Hello **world**", buttons=((Button("Again", "/retry"),),)), final=True)
    card = dingtalk.cards[ref.message_id].params
    assert (card["msgContent"], card["flowStatus"]) == ("Hello **world**", render.FINISHED)
    assert json.loads(card["sys_full_json_obj"])["msgButtons"][0]["id"] == "/retry"
    assert [c.path for c in dingtalk.calls if "/card/" in c.path] == [
        "/v1.0/card/instances/createAndDeliver", "/v1.0/card/streaming", "/v1.0/card/instances"]


async def test_where_cards_are_refused_replies_go_by_the_session_webhook(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    dingtalk.fail("createAndDeliver", 403, NO_CARDS)
    await adapter.send(chat, Reply("line one\nline two", title="Plan"))
    assert len(dingtalk.calls_to("/robot/sendBySession")) == 1
    assert dingtalk.shown("staff-ann") == ["### Plan\nline one\nline two"]
    body = dingtalk.calls_to("/robot/sendBySession")[0].body
    assert body["markdown"]["text"].split("\n")[1] == "line one  "  # a hard break: DingTalk joins single lines


async def test_with_the_webhook_expired_the_robot_openapi_sends(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk, webhook_ms=30_000)  # inside the safety margin
    dingtalk.fail("createAndDeliver", 403, NO_CARDS)
    ref = await adapter.send(chat, Reply("by the OpenAPI"), final=False)
    await adapter.edit(ref, Reply("by the OpenAPI, complete"), final=True)  # cannot edit: the end follows
    first, _ = dingtalk.calls_to("oToMessages/batchSend")
    assert first.body["userIds"] == ["staff-ann"] and first.body["msgKey"] == "sampleMarkdown"
    assert dingtalk.shown("staff-ann") == ["by the OpenAPI", "by the OpenAPI, complete"]
    assert not dingtalk.calls_to("/robot/sendBySession")


async def test_markdown_is_rendered_to_dingtalks_dialect() -> None:
    shown = render.markdown(Reply("a <font color=red>x</font> `<b>` b\n```\n<kept>\n```"))
    assert shown == "a &lt;font color=red>x&lt;/font> `<b>` b\n```\n<kept>\n```"
    assert render.markdown(Reply("a\n```b", monospace=True)) == "```\na\n'''b\n```"
    parts = render.split_to_fit(Reply("\n".join(["一二三四五六七八九十"] * 1200), title="T"))
    assert len(parts) >= 3 and all(len(render.markdown(p)) <= render.MAX_CHARS for p in parts)
    assert parts[0].title == "T" and parts[1].title is None


async def test_the_twenty_first_message_into_a_group_within_a_minute_is_refused(
        make: Make, dingtalk: FakeDingTalk) -> None:
    dingtalk.budget_allowance = "this test goes over the per-group limit on purpose"
    dingtalk.app_qps = 1000  # not about the app's calls per second
    adapter, _ = await dm(make, dingtalk)
    group = ChatRef("dingtalk", "cid-group", is_group=True, origin=ReplyTo("m"))
    for n in range(GROUP_PER_MINUTE):
        await adapter.send(group, Reply(f"n{n}"))
    try:
        await adapter.send(group, Reply("one too many"))
        raise AssertionError("the fake let a 21st message through")
    except RateLimited as e:
        assert e.retry_after > 0
    assert [b.rule for b in dingtalk.budget_breaches if b.target == "cid-group"] == ["per group"]


async def test_the_hubs_pacing_keeps_a_group_inside_its_budget(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, _ = await dm(make, dingtalk)
    assert adapter.capabilities.group_send_window == (GROUP_PER_MINUTE, 60.0)
    delivery = Delivery(adapter)
    group = ChatRef("dingtalk", "cid-group", is_group=True)
    for n in range(5):
        await delivery.send(group, Reply(f"n{n}"))
    assert dingtalk.shown("cid-group") == [f"n{n}" for n in range(5)] and not dingtalk.budget_breaches


async def test_an_app_over_its_calls_per_second_is_told_to_wait(make: Make, dingtalk: FakeDingTalk) -> None:
    dingtalk.budget_allowance = "this test goes over the app's calls per second on purpose"
    adapter, chat = await dm(make, dingtalk)
    refusals = 0
    for n in range(APP_QPS + 5):
        try:
            await adapter.send(chat, Reply(f"n{n}"))
        except RateLimited:
            refusals += 1
    assert refusals >= 5 and any(b.rule == "app QPS per API" for b in dingtalk.budget_breaches)


async def test_the_apps_calls_per_second_are_counted_per_api(make: Make, dingtalk: FakeDingTalk) -> None:
    """DingTalk limits each interface apart: a second's full budget of card creations leaves the streaming
    updates theirs, and only a call past one interface's budget is refused (with DingTalk's 403 code)."""
    dingtalk.budget_allowance = "the last card creation goes over its API's calls per second on purpose"
    adapter, chat = await dm(make, dingtalk)
    dingtalk.qps_clock = lambda: 100.0  # every call below in one and the same second
    refs = [await adapter.send(chat, Reply(f"n{n}"), final=False) for n in range(APP_QPS)]
    for ref in refs:
        await adapter.edit(ref, Reply("more"), final=False)
    with pytest.raises(RateLimited):
        await adapter.send(chat, Reply("one too many"), final=False)
    assert len(dingtalk.calls_to("createAndDeliver")) == APP_QPS + 1
    assert len(dingtalk.calls_to("/card/streaming")) == APP_QPS
    creation = f"{dingtalk.client_id} POST /v1.0/card/instances/createAndDeliver"
    assert [b.target for b in dingtalk.budget_breaches] == [creation]
