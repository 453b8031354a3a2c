"""Files through the adapter's own calls: handles that name no DingTalk file, a download code DingTalk does not
know, pictures out as image messages, and uploads DingTalk refuses."""

from __future__ import annotations

import pytest

from bot.adapter import OutgoingFile, SendFailed
from bot.messages import Attachment, AttachmentKind
from tests.adapters.dingtalk.conftest import Make
from tests.adapters.dingtalk.test_outbound import dm
from tests.fakes.dingtalk_api import FakeDingTalk

PNG = b"\x89PNG\r\n\x1a\n" + b"p" * 64


async def fetched(adapter: object, handle: str) -> bytes:
    attachment = Attachment(kind=AttachmentKind.FILE, name="f", handle=handle)
    return b"".join([chunk async for chunk in adapter.files.download(attachment)])  # type: ignore[attr-defined]


@pytest.mark.parametrize("handle", ["", "file", "sticker/code-1", "file/"])
async def test_a_handle_that_names_no_dingtalk_file_is_refused_without_a_call(
        make: Make, dingtalk: FakeDingTalk, handle: str) -> None:
    adapter, _, _ = await make()
    with pytest.raises(SendFailed, match="not a dingtalk file"):
        await fetched(adapter, handle)
    assert dingtalk.calls_to("messageFiles/download") == []


async def test_a_download_code_dingtalk_does_not_know_is_a_send_failure(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, _, _ = await make()
    with pytest.raises(SendFailed, match="invalidDownloadCode"):
        await fetched(adapter, "file/code-that-expired")


async def test_a_picture_goes_out_as_an_image_message_and_its_caption_after_it(
        make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    await adapter.files.upload(chat, OutgoingFile(PNG, "chart.png", "image/png", caption="the chart"))  # type: ignore[attr-defined]
    keys = [c.body["msgKey"] for c in dingtalk.calls_to("oToMessages/batchSend")]
    assert keys == ["sampleImageMsg", "sampleText"]
    await adapter.files.upload(chat, OutgoingFile(b"a,b\n1,2\n", "t.csv", "text/csv"))  # type: ignore[attr-defined]
    keys = [c.body["msgKey"] for c in dingtalk.calls_to("oToMessages/batchSend")]
    assert keys == ["sampleImageMsg", "sampleText", "sampleFile"]  # no caption: nothing after it


async def test_an_upload_dingtalk_refuses_is_a_send_failure_and_nothing_is_posted(
        make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    dingtalk.expire_tokens()  # media/upload names the token in its query and answers errcode 40014
    with pytest.raises(SendFailed, match="40014"):
        await adapter.files.upload(chat, OutgoingFile(PNG, "chart.png", "image/png"))  # type: ignore[attr-defined]
    assert dingtalk.calls_to("oToMessages/batchSend") == []
