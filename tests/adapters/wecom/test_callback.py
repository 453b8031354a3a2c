"""The encrypted callback mode against WeCom's side of it (tests/fakes/wecom_callback.py, its own cipher):
the console's URL check, a message answered by an open stream that WeCom polls until `finish`, a second
reply through the single-use response_url, a redelivery answered by the same stream, and every request
with an absent, empty or wrong signature refused before anything reaches the hub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.adapter import OutgoingFile, SendFailed
from bot.messages import IncomingMessage
from bot.replies import Reply
from tests.adapters.contract.driver import serve_routes
from tests.adapters.wecom.conftest import Make, text
from tests.fakes.wecom_callback import ENCODING_AES_KEY, TOKEN, FakeWeComCallbacks, seal
from tests.fakes.wecom_ws import FakeWeCom

ENV = {"WECOM_TOKEN": TOKEN, "WECOM_ENCODING_AES_KEY": ENCODING_AES_KEY}


@pytest.fixture
async def hooked(make: Make) -> AsyncIterator[tuple[Any, Any, FakeWeComCallbacks]]:
    adapter, inbox, routes = await make(env=ENV, transport="callback")
    runner, base = await serve_routes(routes)
    side = FakeWeComCallbacks(base + "/wecom/callback")
    await side.start()
    yield adapter, inbox, side
    await side.stop()
    await runner.cleanup()


async def test_the_url_check_echoes_the_decrypted_echostr(hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    _, _, side = hooked
    status, echoed = await side.verify_url()
    assert status == 200 and echoed.startswith("echo-")


@pytest.mark.parametrize("signature", ["", "0" * 40, "absent"])
async def test_a_bad_signature_is_refused_and_reaches_nobody(
        hooked: tuple[Any, Any, FakeWeComCallbacks], signature: str) -> None:
    _, inbox, side = hooked
    if signature == "absent":
        async with side.http.post(side.bot_url, json={"encrypt": "abc"}) as resp:
            assert resp.status == 403
        async with side.http.get(side.bot_url, params={"echostr": "abc"}) as resp:
            assert resp.status == 403
    else:
        status, _ = await side.post(text("m-bad", "sneaky"), signature=signature)
        assert status == 403
        assert (await side.verify_url(signature=signature))[0] == 403
    assert inbox.handed == []


async def test_a_message_is_answered_by_a_polled_stream_then_the_response_url(
        hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    adapter, inbox, side = hooked
    body = {**text("m-cb-1", "@助手 你好", group="wrkGroupCb"), "response_url": side.response_url()}
    status, first = await side.post(body)
    assert status == 200 and first is not None and first["msgtype"] == "stream"
    assert first["stream"]["finish"] is False
    message = await inbox.next()
    assert isinstance(message, IncomingMessage) and (message.chat_id, message.text) == ("wrkGroupCb", "你好")

    async def answer() -> None:
        ref = await adapter.send(message.chat, Reply("你好，"), final=False)
        await asyncio.sleep(0.1)
        await adapter.edit(ref, Reply("你好，我在。"), final=True)

    writer = asyncio.create_task(answer())
    assert await side.poll(first, "m-cb-1") == "你好，我在。"
    await writer
    _, again = await side.post(body)  # a redelivery: the same stream, not a second message
    assert again is not None and again["stream"]["id"] == first["stream"]["id"] and len(inbox.handed) == 1
    await adapter.send(message.chat, Reply("还有一件事"))
    assert [post["markdown"]["content"] for _, post in side.posts] == ["还有一件事"]


async def test_entering_the_chat_is_answered_with_the_welcome(hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    _, _, side = hooked
    event = {"msgid": "ev-cb-enter", "chattype": "single", "from": {"userid": "lisi"}, "msgtype": "event",
             "event": {"eventtype": "enter_chat"}}
    _, answer = await side.post(event)
    assert answer is not None and answer["text"]["content"].startswith("你好")


async def test_a_picture_by_callback_is_fetched_but_files_go_out_only_by_the_long_connection(
        hooked: tuple[Any, Any, FakeWeComCallbacks], wecom: FakeWeCom) -> None:
    adapter, inbox, side = hooked
    url, key = wecom.host_media(b"\x89PNG\r\n\x1a\n" + b"p" * 300)
    body = {"msgid": "m-cb-img", "chattype": "single", "from": {"userid": "lisi"}, "msgtype": "image",
            "image": {"url": url, "aeskey": key}}
    assert (await side.post(body))[0] == 200
    message = await inbox.next()
    assert isinstance(message, IncomingMessage)
    got = b"".join([chunk async for chunk in adapter.files.download(message.attachments[0])])
    assert got.startswith(b"\x89PNG") and len(got) == 308
    with pytest.raises(SendFailed, match="long connection"):
        await adapter.files.upload(message.chat, OutgoingFile(b"report", "r.txt", "text/plain"))


async def test_a_body_that_is_no_encrypted_object_is_refused_and_reaches_nobody(
        hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    _, inbox, side = hooked
    for raw in (b"not json", b"[1, 2]", b'{"encrypt": 7}', b"{}"):
        async with side.http.post(side.bot_url, params=side.query("x"), data=raw) as resp:
            assert (resp.status, await resp.text()) == (400, "no encrypt")
    sealed = seal("[1, 2]")  # signed and encrypted as WeCom would, but no object inside
    async with side.http.post(side.bot_url, params=side.query(sealed), json={"encrypt": sealed}) as resp:
        assert (resp.status, await resp.text()) == (400, "not an object")
    garbled = seal("{not json")
    async with side.http.post(side.bot_url, params=side.query(garbled), json={"encrypt": garbled}) as resp:
        assert resp.status == 403
    assert inbox.handed == []


async def test_a_callback_while_stopped_is_answered_503_so_wecom_tries_again(
        hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    adapter, inbox, side = hooked
    await adapter.stop()
    assert (await side.post(text("m-early", "anyone?")))[0] == 503
    assert inbox.handed == []


async def test_a_used_or_refusing_response_url_is_a_send_failure(
        hooked: tuple[Any, Any, FakeWeComCallbacks]) -> None:
    adapter, inbox, side = hooked
    url = side.response_url()
    assert (await side.post({**text("m-url", "hi"), "response_url": url}))[0] == 200
    message = await inbox.next()
    ref = await adapter.send(message.chat, Reply("streamed"), final=True)  # the stream answers first
    assert ref.message_id
    async with side.http.post(url, json={"msgtype": "markdown", "markdown": {"content": "x"}}):
        pass  # someone else used the single-use URL first
    with pytest.raises(SendFailed, match="refused the reply"):
        await adapter.send(message.chat, Reply("a second reply"))
    with pytest.raises(SendFailed, match="takes no more replies"):
        await adapter.send(message.chat, Reply("a third"))
    assert (await side.post({**text("m-dead", "hi"), "response_url": "http://127.0.0.1:9/gone"}))[0] == 200
    gone = await inbox.next()
    await adapter.send(gone.chat, Reply("streamed"), final=True)
    with pytest.raises(SendFailed, match="response_url failed"):
        await adapter.send(gone.chat, Reply("after"))
