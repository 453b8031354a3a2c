"""Cost and budgets through the whole app: /usage shows exactly the fake's reported usage × the price table,
per user and per chat; a chat past its budget gets a polite refusal with the reset time and no model request."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from bot.agent.budgets import Budgets
from bot.agent.modelapi import Usage
from bot.agent.usage import UsageLedger
from bot.llmconfig import BudgetsConfig
from bot.store.sqlite import SqliteStore
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app

PRICES = {"fake-model": {"input": 1000.0, "output": 5000.0}}  # per million tokens: big, so four decimals show it


def fake_usage(fake: FakeOpenAI) -> tuple[int, int]:
    """What the fake reported: a quarter of the prompt's characters plus one, one token per streamed word."""
    prompt = sum(sum(len(m.get("content") or "") for m in r["body"]["messages"]) // 4 + 1 for r in fake.requests)
    return prompt, 2 * len(fake.requests)


async def test_usage_is_the_fakes_usage_times_the_price_table(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(Text("first answer"), Text("second answer"))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config={"llm": {"prices": PRICES}}) as app:
        await rec.say("hello")
        await rec.say("again")
        await app.hub.idle()
        await rec.say("/usage all")
        await app.hub.idle()
        shown = rec.texts()[-1]
    prompt, completion = fake_usage(fake)
    cost = (prompt * 1000.0 + completion * 5000.0) / 1e6
    line = f"today {prompt + completion} tokens, cost {cost:.4f}; this month {prompt + completion} tokens"
    assert shown.count(line) == 3  # you, this chat, everyone
    assert f"· recording:u1: {prompt + completion} tokens, {cost:.4f}" in shown


async def test_a_chat_past_its_daily_budget_is_refused_until_tomorrow(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"llm": {"prices": PRICES}, "budgets": {"chat": {"daily": 0.001}, "admins_exempt": False}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await rec.say("hello there")
        await app.hub.idle()
        await rec.say("and again")
        await app.hub.idle()
        reset = (app.usage.today() + timedelta(days=1)).isoformat()
        assert len(fake.requests) == 1  # the refusal asked no model
        assert rec.texts()[-1].startswith("Sorry, this chat's daily budget is used up (")
        assert rec.texts()[-1].endswith(f"of 0.001). It resets at {reset} 00:00 UTC.")
        await rec.say("/lang zh")
        await rec.say("/usage all")
        await app.hub.idle()
        assert rec.texts()[-1].startswith("你：今天")


@pytest.fixture
async def ledger(tmp_path: Path) -> UsageLedger:
    store = SqliteStore(tmp_path / "usage.sqlite3")
    await store.open()
    return UsageLedger(store.usage, lambda: date(2026, 12, 31))


@pytest.mark.parametrize(("cfg", "admin", "refused"), [
    ({"user": {"monthly": 100}, "unit": "tokens"}, False, "your monthly budget is used up (150 tokens of 100"),
    ({"everyone": {"daily": 0.5}}, False, "the bot's daily budget is used up (0.6 of 0.5). It resets at 2027-01-01"),
    ({"everyone": {"daily": 0.5}}, True, None),  # admins exempt by default
    ({"everyone": {"daily": 0.5}, "admins_exempt": False}, True, "the bot's daily budget"),
    ({"chat": {"daily": 1}}, False, None),  # below the cap: answered
])
async def test_budget_scopes_units_and_admins(ledger: UsageLedger, cfg: dict[str, object], admin: bool,
                                              refused: str | None) -> None:
    ledger.record("t:a", "t:u1", "m", Usage(100, 50), 0.6)  # still pending: a check counts it all the same
    refusal = await Budgets(BudgetsConfig.model_validate(cfg), ledger).refusal("t:a", "t:u1", admin, "en")
    assert (refusal is None) if refused is None else (refusal is not None and refused in refusal)
    await ledger.drain()
    again = await Budgets(BudgetsConfig.model_validate(cfg), ledger).refusal("t:a", "t:u1", admin, "en")
    assert again == refusal  # stored now: the same verdict from the database
