"""Replies through the real PTB bot into the strict fake: HTML, limits, keyboards, typed failures."""

from __future__ import annotations

import pytest

from adapters.telegram.adapter import TelegramAdapter
from bot.adapter import ChatUnavailable, RateLimited, SendFailed
from bot.messages import ButtonPress, ChatRef, SentRef
from bot.replies import Button, Reply
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_rules import parse_html

DM = ChatRef("telegram", "42")
GROUP = -100500

LONG_MARKDOWN = "\n\n".join(
    f"## Part {n}\n\nSome **bold** text & <symbols> with `code {n}`.\n\n```python\n"
    + "\n".join(f"print('line {n}.{k}')  # a < b" for k in range(40))
    + "\n```"
    for n in range(8)
)


@pytest.fixture
def adapter(polling) -> TelegramAdapter:
    return polling[0]


async def test_markdown_goes_out_as_telegram_html(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    ref = await adapter.send(DM, Reply("**Hi** _there_ `x<y` [docs](https://example.com)"))
    [call] = fake.calls_of("sendMessage")
    assert call["parse_mode"] == "HTML"
    assert call["text"] == '<b>Hi</b> <i>there</i> <code>x&lt;y</code> <a href="https://example.com">docs</a>'
    assert fake.bot_texts(42) == ["Hi there x<y docs"]
    assert ref == SentRef(DM, str(fake.messages(42)[-1].message_id))


async def test_long_markdown_is_split_into_valid_parts(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    assert len(LONG_MARKDOWN) > 2 * 4096
    ref = await adapter.send(DM, Reply(LONG_MARKDOWN))
    sent = fake.calls_of("sendMessage")
    assert len(sent) >= 3
    for call in sent:
        visible, _ = parse_html(call["text"])  # balanced, Telegram-valid tags in every part
        assert len(visible.encode("utf-16-le")) // 2 <= 4096
        assert call["text"].count("<pre>") == call["text"].count("</pre>")
    shown = "\n".join(fake.bot_texts(42))
    for n in range(8):
        assert all(f"print('line {n}.{k}')  # a < b" in shown for k in range(40))
    assert ref.message_id == str(fake.messages(42)[-1].message_id)


async def test_rejected_entities_fall_back_to_plain_text(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    fake.fail("sendMessage", 400, 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 3')
    await adapter.send(DM, Reply("**bold** move"))
    first, second = fake.calls_of("sendMessage")
    assert first["parse_mode"] == "HTML" and "parse_mode" not in second
    assert second["text"] == "bold move"
    assert fake.bot_texts(42) == ["bold move"]


@pytest.mark.parametrize("timedelta", [
    pytest.param(True, id="timedelta"),
    # the SDK itself warns when it builds the error; production's default filters keep that quiet
    pytest.param(False, id="integer", marks=pytest.mark.filterwarnings("ignore::DeprecationWarning")),
])
async def test_flood_answer_raises_rate_limited(fake: FakeTelegram, adapter: TelegramAdapter, timedelta: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Production runs without PTB_TIMEDELTA, where the SDK hands retry_after over as a deprecated int."""
    if not timedelta:
        monkeypatch.delenv("PTB_TIMEDELTA")
    fake.open_chat(42)
    fake.rate_limit("sendMessage", retry_after=7)
    with pytest.raises(RateLimited) as caught:
        await adapter.send(DM, Reply("hello"))
    assert caught.value.retry_after == 7
    await adapter.send(DM, Reply("hello"))  # the hub's retry goes through
    assert fake.bot_texts(42) == ["hello"]


def test_flood_limits_are_on_with_telegrams_published_values() -> None:
    flood = FakeTelegram().flood
    assert flood is not None  # on unless a test turns it off
    # Bot FAQ: ~1 message/s per chat after a short burst, 20 new messages/minute per group, 30/s overall
    assert (flood.per_chat_rate, flood.group_per_minute, flood.global_per_second) == (1.0, 20, 30)
    assert flood.per_chat_burst == 3


async def test_twenty_first_message_into_a_group_within_a_minute_is_refused(
        fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    """Mutation of the hub's pacing in miniature: sending past the group rule gets Telegram's 429."""
    now = [1000.0]
    assert fake.flood is not None
    fake.flood.clock = fake.judge.clock = lambda: now[0]
    fake.open_chat(GROUP)
    group = ChatRef("telegram", str(GROUP), is_group=True)
    for n in range(20):
        now[0] += 1.0  # inside the per-chat rule: one a second
        await adapter.send(group, Reply(f"message {n}"))
    now[0] += 1.0
    with pytest.raises(RateLimited) as caught:
        await adapter.send(group, Reply("one too many"))
    assert caught.value.retry_after == 40  # the first of the 20 leaves the 60 s window 40 s from now
    now[0] += 40.0
    await adapter.send(group, Reply("one too many"))
    assert len(fake.bot_texts(GROUP)) == 21 and fake.flood.rejected == 1
    assert [b.target for b in fake.budget_breaches] == [str(GROUP)]  # the judge saw the same one
    fake.budget_allowance = "past the group rule on purpose"


async def test_a_burst_past_the_per_chat_rule_is_refused_and_edits_count(
        fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    now = [1000.0]
    assert fake.flood is not None
    fake.flood.clock = fake.judge.clock = lambda: now[0]
    fake.open_chat(42)
    first = await adapter.send(DM, Reply("one"))
    await adapter.send(DM, Reply("two"))
    await adapter.edit(first, Reply("one, edited"), final=True)
    with pytest.raises(RateLimited) as caught:
        await adapter.send(DM, Reply("four"))
    assert caught.value.retry_after == 1
    now[0] += 1.0
    await adapter.send(DM, Reply("four"))
    assert fake.bot_texts(42) == ["one, edited", "two", "four"]
    assert [b.target for b in fake.budget_breaches] == ["42"]
    fake.budget_allowance = "past the per-chat rule on purpose"


async def test_blocked_chat_raises_chat_unavailable(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    fake.block(42)
    with pytest.raises(ChatUnavailable):
        await adapter.send(DM, Reply("hello"))
    with pytest.raises(ChatUnavailable):
        await adapter.typing(DM)


async def test_unknown_chat_is_unavailable_and_other_errors_fail(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    with pytest.raises(ChatUnavailable):
        await adapter.send(ChatRef("telegram", "999"), Reply("hello"))
    fake.open_chat(42)
    fake.fail("sendMessage", 400, "Bad Request: something odd")
    with pytest.raises(SendFailed, match=r"(?i)something odd"):
        await adapter.send(DM, Reply("hello"))


async def test_streaming_edits_and_unchanged_edits(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    ref = await adapter.send(DM, Reply("Hel"))
    await adapter.edit(ref, Reply("Hello **world**"), final=True)
    await adapter.edit(ref, Reply("Hello **world**"), final=True)  # Telegram: "message is not modified" → ignored
    assert fake.bot_texts(42) == ["Hello world"]
    assert len(fake.calls_of("editMessageText")) == 2
    fake.fail("editMessageText", 400, "Bad Request: message to edit not found")
    with pytest.raises(SendFailed):
        await adapter.edit(ref, Reply("gone"), final=True)


async def test_monospace_reply_with_keyboard(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    tree = "1 ├─ hi <you>\n2 └─ * there"
    buttons = ((Button("Go 1", "/goto 1"), Button("Go 2", "/goto 2")), (Button("Too long", "/x " + "y" * 70),))
    await adapter.send(DM, Reply(tree, title="Tree", buttons=buttons, monospace=True))
    [call] = fake.calls_of("sendMessage")
    assert call["text"] == "<b>Tree</b>\n<pre>1 ├─ hi &lt;you&gt;\n2 └─ * there</pre>"
    assert call["reply_markup"] == {"inline_keyboard": [[{"text": "Go 1", "callback_data": "/goto 1"},
                                                         {"text": "Go 2", "callback_data": "/goto 2"}]]}


async def test_a_press_names_the_keyboard_message_which_an_edit_replaces(fake: FakeTelegram, polling) -> None:
    adapter, inbox = polling
    fake.open_chat(42)
    keyboard = await adapter.send(DM, Reply("pick", buttons=((Button("B", "/switch b"),),)))
    fake.inject_callback(42, int(keyboard.message_id), "/switch b")
    press = await inbox.next()
    assert isinstance(press.origin, ButtonPress) and press.origin.message_id == keyboard.message_id
    await adapter.edit(SentRef(press.chat, keyboard.message_id),
                       Reply("switched", buttons=((Button("Back", "/switch a"),),)), final=True)
    [edit] = fake.calls_of("editMessageText")
    assert edit["reply_markup"] == {"inline_keyboard": [[{"text": "Back", "callback_data": "/switch a"}]]}
    assert fake.bot_texts(42) == ["switched"]
    await adapter.send(press.chat, Reply("second part"))
    assert fake.bot_texts(42) == ["switched", "second part"]
    assert "reply_parameters" not in fake.calls_of("sendMessage")[-1]  # a press is not quoted


async def test_topic_replies_and_typing_stay_in_the_topic(fake: FakeTelegram, polling) -> None:
    adapter, inbox = polling
    fake.inject_message(GROUP, "@hub_test_bot hi", thread_id=7)
    msg = await inbox.next()
    await adapter.typing(msg.chat)
    await adapter.send(msg.chat, Reply("hello topic"))
    [action] = fake.calls_of("sendChatAction")
    assert (action["action"], action["message_thread_id"]) == ("typing", 7)
    [sent] = fake.calls_of("sendMessage")
    assert sent["message_thread_id"] == 7
    assert sent["reply_parameters"]["message_id"] == int(msg.message_id)  # groups quote the asker
    assert fake.bot_texts(GROUP, thread_id=7) == ["hello topic"]

