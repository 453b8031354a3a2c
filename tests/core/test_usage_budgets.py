"""Cost and budgets through the whole app: /usage shows exactly the fake's reported usage × the price table,
per user and per chat; a chat past its budget gets a polite refusal with the reset time and no model request."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from bot.agent.budgets import Budgets, Hold
from bot.agent.modelapi import Usage
from bot.llmconfig import BudgetsConfig, PriceConfig
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


@pytest.mark.parametrize("chain", [None, "fast"])  # a chain's name is priced by its first link's model
async def test_a_chat_without_room_for_a_request_is_refused_until_tomorrow(tmp_path: Path, fake: FakeOpenAI,
                                                                          chain: str | None) -> None:
    rec = RecordingAdapter()
    # a request uses about 800 tokens (0.8); its estimate counts the tool definitions too (about 3, with the
    # built-in skills, skill_create and delegate): room for one request and not for a second
    llm = {"prices": PRICES, "chains": {"fast": [{"model": "fake-model"}]}, "allowed_models": ["fast"]}
    config = {"llm": llm, "budgets": {"chat": {"daily": 4.0}, "admins_exempt": False, "reserve_output_tokens": 8}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        if chain:
            await rec.say(f"/model {chain}")
        await rec.say("hello there")
        await app.hub.idle()
        await rec.say("and again")
        await app.hub.idle()
        reset = (app.usage.today() + timedelta(days=1)).isoformat()
        assert len(fake.requests) == 1  # the refusal asked no model
        assert rec.texts()[-1].startswith("Sorry, this chat's daily budget has not enough left for this request (")
        assert rec.texts()[-1].endswith(f"of 4 used). It resets at {reset} 00:00 UTC.")
        await rec.say("/lang zh")
        await rec.say("/usage all")
        await app.hub.idle()
        assert rec.texts()[-1].startswith("你：今天")


@pytest.fixture
async def store(tmp_path: Path) -> SqliteStore:
    store = SqliteStore(tmp_path / "usage.sqlite3")
    await store.open()
    return store


def budgets(store: SqliteStore, cfg: dict[str, object]) -> Budgets:
    return Budgets(BudgetsConfig.model_validate({"reserve_output_tokens": 50, **cfg}), store.quotas,
                   {"m": PriceConfig(input=2000, output=2000)}, today=lambda: date(2026, 12, 31))


@pytest.mark.parametrize(("cfg", "admin", "refused"), [
    ({"user": {"monthly": 200}, "unit": "tokens"}, False, "your monthly budget has not enough left for this request "
     "(150 tokens of 200 tokens used). It resets at 2027-01-01 00:00 UTC."),
    ({"agent": {"daily": 0.5}}, False, "the bot's daily budget has not enough left for this request (0.3 of 0.5 used)"),
    ({"agent": {"daily": 0.5}}, True, None),  # admins exempt by default
    ({"agent": {"daily": 0.5}, "admins_exempt": False}, True, "the bot's daily budget"),
    ({"chat": {"daily": 1}}, False, None),  # enough left: answered
])
async def test_budget_scopes_units_and_admins(store: SqliteStore, cfg: dict[str, object], admin: bool,
                                              refused: str | None) -> None:
    b = budgets(store, cfg)
    first = await b.reserve("t:a", "t:u1", admin, "m", 100, "en")  # 150 tokens, 0.3 money
    assert first is None or not isinstance(first, str)
    second = await b.reserve("t:a", "t:u1", admin, "m", 100, "en")
    assert (second is None or not isinstance(second, str)) if refused is None else (
        isinstance(second, str) and refused in second)


async def test_settling_gives_back_what_the_estimate_overshot_and_warns_once(store: SqliteStore) -> None:
    b = budgets(store, {"user": {"daily": 400}, "unit": "tokens"})
    hold = await b.reserve("t:a", "t:u1", False, "m", 200, "zh")  # 250 reserved
    assert isinstance(hold, Hold) and hold.warning is None
    b.settle(hold, Usage(100, 20), None)  # 120 used: 130 given back
    await b.drain()
    again = await b.reserve("t:a", "t:u1", False, "m", 200, "zh")  # 370 of 400: over 80 %
    assert isinstance(again, Hold) and again.warning == (
        "提示：你的每日预算已用 92%（370 tokens / 400 tokens）。将于 2027-01-01 00:00（UTC）重置。")
    b.settle(again, None, None)  # the request failed: all of it given back
    await b.drain()
    third = await b.reserve("t:a", "t:u1", False, "m", 200, "en")
    assert isinstance(third, Hold) and third.warning is None  # once a period
