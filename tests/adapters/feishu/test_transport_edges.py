"""Answers no Feishu API should give, as a proxy or a broken gateway gives them: not JSON, not an object, a
success without the field asked for, JSON where a file was expected. Each is a SendFailed naming it."""

from __future__ import annotations

import pytest

from bot.adapter import SendFailed
from bot.messages import Attachment, AttachmentKind, ChatRef
from bot.replies import Reply
from tests.adapters.feishu.conftest import StartAdapter

CHAT = ChatRef("feishu", "oc_dm")


@pytest.mark.parametrize(("text", "status", "content_type", "reason"), [
    ("<html>502 Bad Gateway</html>", 502, "text/html", "non-JSON answer"),
    ("[1, 2]", 200, "application/json", "unexpected answer"),
    ('{"code": 0, "msg": "ok", "data": {}}', 200, "application/json", "answer without data.message_id"),
    ('{"code": 0, "msg": "ok", "data": {"message_id": ""}}', 200, "application/json", "without data.message_id"),
])
async def test_an_answer_feishu_would_not_give_is_a_send_failure_naming_it(
        start_adapter: StartAdapter, text: str, status: int, content_type: str, reason: str) -> None:
    h = await start_adapter()
    for _ in ("card", "then plain text"):  # a card refused in a way no simpler card fixes still falls back to text
        h.fake.answer_raw("POST", "/im/v1/messages", text, status, content_type)
    with pytest.raises(SendFailed, match=reason):
        await h.adapter.send(CHAT, Reply("hello"))
    assert [c.body["msg_type"] for c in h.fake.requests("POST", "/im/v1/messages")] == ["interactive", "text"]
    await h.adapter.send(CHAT, Reply("hello again"))  # the next answer is a real one
    assert h.fake.shown("oc_dm")[-1] == "hello again"


async def test_json_where_a_file_was_expected_is_a_send_failure(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    h.fake.answer_raw("GET", "/resources/img_1", '{"code": 0, "msg": "ok"}')
    picture = Attachment(kind=AttachmentKind.IMAGE, name="image", handle="om_in_1/img_1/image")
    with pytest.raises(SendFailed, match="no file in the answer"):
        async for _chunk in h.adapter.files.download(picture):
            pass
