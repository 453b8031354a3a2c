"""A file the agent sends goes through the same pacing and retries as text, and each way it can fail becomes a
sentence the model can act on: the real Telegram adapter against its fake Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from adapters.telegram import TelegramConfig
from adapters.telegram import adapter as telegram_adapter
from adapters.telegram.outbound import MAX_UPLOAD
from bot.adapter import Adapter, OutgoingFile
from bot.delivery import Delivery, sending
from bot.messages import ChatRef
from tests.adapters.contract.driver import Inbox, services
from tests.fakes.telegram_api import TOKEN, FakeTelegram
from tests.harness import RecordingAdapter

CHAT = 77
REPORT = OutgoingFile(b"a,b\n1,2\n", "report.csv", "text/csv")


@pytest_asyncio.fixture
async def telegram() -> AsyncIterator[tuple[FakeTelegram, Adapter]]:
    fake = FakeTelegram()
    await fake.start()
    fake.open_chat(CHAT, "private")
    adapter = telegram_adapter.create(TelegramConfig(), {"TELEGRAM_BOT_TOKEN": TOKEN,
                                                         "TELEGRAM_API_BASE": fake.api_base}, services([]))
    await adapter.start(Inbox())
    yield fake, adapter
    await adapter.stop()
    await fake.stop()


def chat() -> ChatRef:
    return ChatRef("telegram", str(CHAT))


async def test_a_rate_limited_upload_waits_and_arrives_once(telegram: tuple[FakeTelegram, Adapter]) -> None:
    fake, adapter = telegram
    fake.rate_limit("sendDocument", 1)
    assert await Delivery(adapter).send_file(chat(), REPORT) == "Sent report.csv to the chat."
    assert len(fake.calls_of("sendDocument")) == 2
    assert [(u.filename, u.data) for u in fake.uploads] == [("report.csv", REPORT.data)]


async def test_an_upload_that_keeps_being_refused_says_so(telegram: tuple[FakeTelegram, Adapter],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fake, adapter = telegram
    monkeypatch.setattr(sending, "MAX_ATTEMPTS", 2)
    fake.rate_limit("sendDocument", 1, times=2)
    said = await Delivery(adapter).send_file(chat(), REPORT)
    assert said == "Error: report.csv could not be sent (the platform kept asking to wait)"
    assert len(fake.calls_of("sendDocument")) == 2 and fake.uploads == []


async def test_a_refused_or_unreachable_upload_is_an_error_the_model_reads(
        telegram: tuple[FakeTelegram, Adapter]) -> None:
    fake, adapter = telegram
    delivery = Delivery(adapter)
    fake.fail("sendDocument", 400, "Bad Request: file must be non-empty")
    assert await delivery.send_file(chat(), REPORT) == ("Error: the platform refused report.csv: "
                                                        "File must be non-empty")
    too_big = OutgoingFile(b"x" * (MAX_UPLOAD + 1), "huge.bin", "application/octet-stream")
    assert await delivery.send_file(chat(), too_big) == (f"Error: huge.bin is {MAX_UPLOAD + 1} bytes; this "
                                                         f"platform takes files up to {MAX_UPLOAD} bytes")
    fake.block(CHAT)
    assert await delivery.send_file(chat(), REPORT) == "Error: this chat can no longer be reached"
    calls = len(fake.calls_of("sendDocument"))
    assert await delivery.send_file(chat(), REPORT) == "Error: this chat can no longer be reached"
    assert len(fake.calls_of("sendDocument")) == calls, "a chat known to be gone is not asked again"
    assert fake.uploads == []


async def test_a_text_only_platform_asks_for_a_description_instead() -> None:
    rec = RecordingAdapter()
    rec.files = None
    assert await Delivery(rec).send_file(ChatRef("recording", "c1"), REPORT) == (
        "Error: this platform takes text only; describe the file instead")
