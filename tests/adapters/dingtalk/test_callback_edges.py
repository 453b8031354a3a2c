"""HTTP callback mode when the body is off: not JSON, not an object, nothing to answer, an unreadable card press,
a press DingTalk repeats, a callback before the adapter runs, and a hub that fails (500: DingTalk retries)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from tests.adapters.contract.driver import Inbox, serve_routes
from tests.adapters.dingtalk.conftest import Make
from tests.adapters.dingtalk.test_callback import MESSAGE, now_ms, signed

Post = Callable[..., Awaitable[int]]


@pytest_asyncio.fixture
async def served(make: Make) -> AsyncIterator[tuple[Any, Inbox, Post]]:
    """(adapter, inbox, post(body: bytes | dict, **headers) → HTTP status), the callback route served."""
    adapter, inbox, routes = await make("http")
    runner, base = await serve_routes(routes)
    async with aiohttp.ClientSession() as http:
        async def post(body: bytes | dict[str, Any], **headers: str) -> int:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            async with http.post(base + "/dingtalk/callback", data=data,
                                 headers={**signed(now_ms()), **headers}) as resp:
                return resp.status

        yield adapter, inbox, post
    await runner.cleanup()


def press(content: str, **fields: str) -> dict[str, str]:
    return {"outTrackId": "card-1", "userId": "staff-bo", "spaceType": "IM", "spaceId": "staff-bo",
            "content": content, **fields}


@pytest.mark.parametrize(("body", "status"), [(b"{not json", 400), (b"[1, 2]", 400), (b'"text"', 400)])
async def test_a_body_that_is_no_json_object_is_refused(
        served: tuple[Any, Inbox, Post], body: bytes, status: int) -> None:
    _, inbox, post = served
    assert await post(body) == status
    assert inbox.handed == []


@pytest.mark.parametrize("change", [
    {"msgId": ""},  # no id to answer or deduplicate by
    {"senderStaffId": "", "senderId": ""},  # nobody sent it
    {"conversationType": "2", "conversationId": ""},  # a group message without its group
    {"text": {"content": "   "}},  # nothing said
])
async def test_a_message_with_nothing_to_answer_is_acknowledged_and_dropped(
        served: tuple[Any, Inbox, Post], change: dict[str, Any]) -> None:
    _, inbox, post = served
    assert await post({**MESSAGE, **change}) == 200  # a refusal would only bring it back
    assert inbox.handed == []


@pytest.mark.parametrize("content", [
    "{not json",
    json.dumps({"cardPrivateData": {"actionIds": [], "params": {}}}),
    json.dumps({"cardPrivateData": {"actionIds": [7]}}),
    json.dumps(["cardPrivateData"]),
])
async def test_an_unreadable_card_press_is_acknowledged_and_dropped(
        served: tuple[Any, Inbox, Post], content: str) -> None:
    _, inbox, post = served
    assert await post(press(content)) == 200
    assert inbox.handed == []


async def test_a_press_dingtalk_delivers_twice_reaches_the_hub_once(served: tuple[Any, Inbox, Post]) -> None:
    _, inbox, post = served
    pressed = press(json.dumps({"cardPrivateData": {"actionIds": ["/tree"]}}))
    assert await post(pressed, **{"x-dingtalk-callback-id": "cb-1"}) == 200
    assert await post(pressed, **{"x-dingtalk-callback-id": "cb-1"}) == 200
    assert await post(pressed, **{"x-dingtalk-callback-id": "cb-2"}) == 200  # pressed again: a new press
    assert [(m.text, m.message_id) for m in inbox.handed] == [("/tree", "press:cb-1"), ("/tree", "press:cb-2")]  # type: ignore[attr-defined]


async def test_a_callback_after_stop_is_answered_503_so_dingtalk_retries(served: tuple[Any, Inbox, Post]) -> None:
    adapter, inbox, post = served
    await adapter.stop()
    assert await post(MESSAGE) == 503
    assert inbox.handed == []


async def test_a_message_not_kept_is_answered_503_and_its_retry_taken(served: tuple[Any, Inbox, Post]) -> None:
    """The hub could not store it (NotKept): DingTalk must not be told it is done, nor its retry dropped as seen."""
    _, inbox, post = served
    inbox.refuse()
    assert await post(MESSAGE) == 503
    assert await post(MESSAGE) == 200  # DingTalk's retry
    assert [m.message_id for m in inbox.handed] == ["msg-http-1", "msg-http-1"]
    assert [m.message_id for m in inbox.accepted] == ["msg-http-1"]
