"""Replies on the long connection: streams on the answered message's req_id until `finish`, a stream
finished before WeCom's window closes (its rest pushed), a req_id WeCom no longer takes answered by a push,
cards for buttons (overflowing commands listed), media out by chunked upload, media in decrypted."""

from __future__ import annotations

import pytest

from adapters.wecom import outbound
from bot.adapter import OutgoingFile, SendFailed
from bot.messages import Attachment, AttachmentKind, ChatRef, IncomingMessage, ReplyTo
from bot.replies import Button, Reply
from tests.adapters.wecom.conftest import Make, text
from tests.fakes import wecom_rules
from tests.fakes.wecom_ws import FakeWeCom


async def asked(make: Make, wecom: FakeWeCom, msgid: str = "m-1") -> tuple[object, ChatRef, str]:
    adapter, inbox, _ = await make()
    rid = await wecom.push_message(text(msgid, "question"))
    message = await inbox.next()
    assert isinstance(message, IncomingMessage)
    return adapter, message.chat, rid


async def test_a_stream_is_refreshed_on_the_req_id_and_finished(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, rid = await asked(make, wecom)
    ref = await adapter.send(chat, Reply("Hel"), final=False)  # type: ignore[attr-defined]
    assert wecom.stream_open(ref.message_id)
    await adapter.edit(ref, Reply("Hello **world**"), final=True)  # type: ignore[attr-defined]
    frames = wecom.calls_of("aibot_respond_msg")
    assert [f.req_id for f in frames] == [rid, rid]
    assert [(f.body["stream"]["content"], f.body["stream"]["finish"]) for f in frames] == [
        ("Hel", False), ("Hello **world**", True)]
    assert {f.body["stream"]["id"] for f in frames} == {ref.message_id}
    assert not wecom.stream_open(ref.message_id) and wecom.shown("lisi") == ["Hello **world**"]


async def test_a_stream_near_its_deadline_is_finished_and_its_end_follows_anew(
        make: Make, wecom: FakeWeCom, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter, chat, _ = await asked(make, wecom)
    now = [1000.0]
    monkeypatch.setattr(outbound.WeComOutbound, "clock", staticmethod(lambda: now[0]))
    ref = await adapter.send(chat, Reply("part one"), final=False)  # type: ignore[attr-defined]
    now[0] += outbound.STREAM_WINDOW - 10  # WeCom would drop the stream in 10 s
    await adapter.edit(ref, Reply("part one and the rest"), final=True)  # type: ignore[attr-defined]
    assert not wecom.stream_open(ref.message_id)
    assert wecom.shown("lisi") == ["part one", "part one and the rest"]


async def test_a_req_id_wecom_refuses_is_answered_by_a_proactive_push(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    wecom.fail("aibot_respond_msg", wecom_rules.INVALID_REQ_ID)
    await adapter.send(chat, Reply("late answer"))  # type: ignore[attr-defined]
    (push,) = wecom.calls_of("aibot_send_msg")
    assert push.body["chatid"] == "lisi" and push.body["chat_type"] == 1
    assert wecom.shown("lisi") == ["late answer"]


async def test_a_scheduled_message_without_a_callback_is_pushed(make: Make, wecom: FakeWeCom) -> None:
    adapter, _, _ = await asked(make, wecom)
    await adapter.send(ChatRef("wecom", "lisi"), Reply("reminder: standup"))  # type: ignore[attr-defined]
    assert wecom.shown("lisi") == ["reminder: standup"] and wecom.calls_of("aibot_send_msg")


async def test_buttons_go_as_a_card_and_overflowing_commands_are_listed(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    buttons = tuple((Button(f"Go {n}", f"/goto {n}"),) for n in range(8))
    await adapter.send(chat, Reply("pick a message", buttons=buttons))  # type: ignore[attr-defined]
    card = next(c for c in wecom.calls_of("aibot_respond_msg") if c.body["msgtype"] == "template_card")
    keys = [b["key"] for b in card.body["template_card"]["button_list"]]
    assert keys == [f"/goto {n}" for n in range(6)]
    assert wecom.shown("lisi") == ["pick a message", "`/goto 6` · `/goto 7`"]


async def test_a_long_reply_is_split_within_wecoms_byte_limit(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    lines = [f"第{n}行：这是一个很长的回答，用来测试按字节拆分。😀" for n in range(600)]
    await adapter.send(chat, Reply("\n".join(lines)))  # type: ignore[attr-defined]
    shown = wecom.shown("lisi")
    assert len(shown) >= 2 and all(len(part.encode()) <= wecom_rules.STREAM_BYTES for part in shown)
    assert [line for part in shown for line in part.split("\n") if line] == lines


async def test_a_file_is_uploaded_in_chunks_and_posted(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    data = bytes(range(256)) * 5000  # 1.28 MB: three chunks
    await adapter.files.upload(chat, OutgoingFile(data, "report.bin", "application/octet-stream",  # type: ignore[attr-defined]
                                                  caption="the report"))
    assert len(wecom.calls_of("aibot_upload_media_chunk")) == 3
    assert wecom.shown("lisi") == ["[file]", "the report"]


async def test_a_tiny_file_is_refused_politely(make: Make, wecom: FakeWeCom) -> None:
    adapter, chat, _ = await asked(make, wecom)
    with pytest.raises(SendFailed, match="under 5 bytes"):
        await adapter.files.upload(chat, OutgoingFile(b"hi", "a.txt", "text/plain"))  # type: ignore[attr-defined]


async def test_an_image_is_fetched_and_decrypted_with_its_own_key(make: Make, wecom: FakeWeCom) -> None:
    adapter, inbox, _ = await make()
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(200)) * 10
    url, key = wecom.host_media(picture)
    body = {"msgid": "m-img", "chattype": "single", "from": {"userid": "lisi"}, "msgtype": "mixed",
            "mixed": {"msg_item": [{"msgtype": "text", "text": {"content": "what is this?"}},
                                   {"msgtype": "image", "image": {"url": url, "aeskey": key}}]}}
    await wecom.push_message(body)
    message = await inbox.next()
    assert isinstance(message, IncomingMessage) and message.text == "what is this?"
    (attachment,) = message.attachments
    assert attachment.kind is AttachmentKind.IMAGE and url not in attachment.handle
    got = b"".join([chunk async for chunk in adapter.files.download(attachment)])
    assert got == picture


async def test_a_file_over_the_cap_is_not_taken(make: Make, wecom: FakeWeCom) -> None:
    adapter, inbox, _ = await make()
    url, key = wecom.host_media(b"x" * 30_000_000)
    await wecom.push_message({"msgid": "m-big", "chattype": "single", "from": {"userid": "lisi"},
                              "msgtype": "file", "file": {"url": url, "aeskey": key}})
    message = await inbox.next()
    assert isinstance(message, IncomingMessage)
    with pytest.raises(SendFailed, match="size cap"):
        _ = [c async for c in adapter.files.download(message.attachments[0])]
    with pytest.raises(SendFailed, match="no longer known"):
        _ = [c async for c in adapter.files.download(Attachment(AttachmentKind.FILE, handle="m-gone/0"))]


async def test_voice_arrives_as_wecoms_recognised_text(make: Make, wecom: FakeWeCom) -> None:
    _, inbox, _ = await make()
    await wecom.push_message({"msgid": "m-voice", "chattype": "single", "from": {"userid": "lisi"},
                              "msgtype": "voice", "voice": {"content": "明天开会吗"}})
    message = await inbox.next()
    assert isinstance(message, IncomingMessage) and message.text == "明天开会吗" and not message.attachments
    assert isinstance(message.chat.origin, ReplyTo)
