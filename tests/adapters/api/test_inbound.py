"""A request → IncomingMessage, exactly: the token's id and the key make the chat, the token's name the sender."""

from __future__ import annotations

import pytest

from adapters.api.inbound import BadRequest, parse
from bot.adapter import TokenHolder

HOLDER = TokenHolder("0123456789ab", "order system", "")


def test_a_message_becomes_a_direct_message_in_the_tokens_own_chat() -> None:
    asked = parse(HOLDER, "customer-42", b'{"text": "  where is my order?  "}')
    msg = asked.message
    assert (msg.platform, msg.chat_id, msg.thread_id, msg.user_id, msg.user_name) == \
        ("api", "0123456789ab.customer-42", None, "0123456789ab", "order system")
    assert (msg.is_group, msg.mentioned, msg.text, msg.attachments) == (False, True, "  where is my order?  ", ())
    assert len(msg.message_id) == 32 and asked.callback_url is None


def test_a_command_is_its_text_and_a_callback_is_kept() -> None:
    asked = parse(HOLDER, "k", b'{"text": "/goto 3", "callback_url": " https://crm.example.com/hook "}')
    assert asked.message.text == "/goto 3" and asked.callback_url == "https://crm.example.com/hook"


def test_the_same_key_under_another_token_is_another_chat() -> None:
    other = TokenHolder("ba9876543210", "another", "")
    assert parse(HOLDER, "k", b'{"text": "a"}').message.chat != parse(other, "k", b'{"text": "a"}').message.chat


@pytest.mark.parametrize(("key", "body", "error"), [
    ("k", b"\xff\xfe", '{"text": "hello"}'),
    ("k", b'"hello"', "JSON object"),
    ("k", b'{"text": "' + b"x" * 32_001 + b'"}', "longer than 32000 characters"),
    ("k#1", b'{"text": "hi"}', "conversation key"),
    ("x" * 65, b'{"text": "hi"}', "conversation key"),
    ("k", b'{"text": "hi", "callback_url": ""}', '"callback_url" must be an http(s) URL'),
])
def test_what_is_refused_says_why(key: str, body: bytes, error: str) -> None:
    with pytest.raises(BadRequest) as refused:
        parse(HOLDER, key, body)
    assert error in str(refused.value)
