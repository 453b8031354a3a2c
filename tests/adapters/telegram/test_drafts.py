"""sendMessageDraft through the real PTB bot into the strict fake: what Telegram accepts, what it refuses, and that
drafts are judged apart from the message budget."""

from __future__ import annotations

import pytest
from telegram.error import BadRequest

from adapters.telegram.adapter import TelegramAdapter
from bot.adapter import DraftsRefused, RateLimited
from bot.messages import ChatRef
from bot.replies import Reply
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_drafts import DRAFTS_PER_SECOND

DM = ChatRef("telegram", "42")
GROUP = -100500


@pytest.fixture
def adapter(polling) -> TelegramAdapter:
    return polling[0]


async def test_an_answer_drafts_under_one_id_and_its_message_replaces_the_draft(
        fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    ref = await adapter.draft(DM, Reply("Hello **there**"), None)
    assert ref.draft and await adapter.draft(DM, Reply("Hello **there**, Ann"), ref) == ref
    [first, second] = fake.calls_of("sendMessageDraft")
    assert first["draft_id"] == second["draft_id"] != 0 and first["parse_mode"] == "HTML"
    sent = await adapter.send(DM, Reply("Hello **there**, Ann."))
    [draft] = fake.drafts_in(42)
    assert draft.texts == ["Hello there", "Hello there, Ann"] and draft.became == int(sent.message_id)
    other = await adapter.draft(DM, Reply("next answer"), None)
    assert other.message_id != ref.message_id  # a fresh id per answer
    assert fake.messages(42)[-1].edits == 0 and not fake.calls_of("editMessageText")


async def test_a_group_refuses_drafts(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(GROUP)
    with pytest.raises(DraftsRefused) as refused:
        await adapter.draft(ChatRef("telegram", str(GROUP), is_group=True), Reply("hi"), None)
    assert not refused.value.everywhere and "textdraft_peer_invalid" in str(refused.value).lower()
    assert not fake.drafts


async def test_a_bot_api_without_the_method_refuses_drafts_everywhere(
        fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    fake.fail("sendMessageDraft", 404, "Not Found")  # what the Bot API answers for a method it does not have
    with pytest.raises(DraftsRefused) as refused:
        await adapter.draft(DM, Reply("hi"), None)
    assert refused.value.everywhere


@pytest.mark.parametrize(("draft_id", "text", "refusal"), [
    (0, "hi", "DRAFT_ID_INVALID"), (7, "", "message text is empty"),
    (7, "x" * 4097, "message is too long"), (7, "x" * 4096, None)])
async def test_the_fake_checks_drafts_as_telegram_does(fake: FakeTelegram, adapter: TelegramAdapter,
                                                      draft_id: int, text: str, refusal: str | None) -> None:
    fake.open_chat(42)
    bot = adapter._outbound.bot
    if refusal is None:
        assert await bot.send_message_draft(42, draft_id, text) is True
        return
    with pytest.raises(BadRequest, match=f"(?i){refusal}"):  # PTB drops "Bad Request: " and capitalizes
        await bot.send_message_draft(42, draft_id, text)


async def test_drafts_spend_no_message_budget_and_have_their_own(fake: FakeTelegram, adapter: TelegramAdapter) -> None:
    fake.open_chat(42)
    ref = await adapter.draft(DM, Reply("word 0"), None)
    for n in range(1, DRAFTS_PER_SECOND):
        await adapter.draft(DM, Reply(f"word {n}"), ref)
    for n in range(3):  # Telegram's per-chat burst of messages, whole, right after five drafts
        await adapter.send(DM, Reply(f"message {n}"))
    assert fake.flood is not None and fake.flood.rejected == 0 and not fake.budget_breaches
    with pytest.raises(RateLimited):  # a sixth draft within the second
        await adapter.draft(DM, Reply("one draft too many"), None)
    assert [b.rule for b in fake.budget_breaches] == ["drafts per chat"]
    fake.budget_allowance = "the draft over the fake's draft rate is the point of the test"
