"""The dashboard's usage page: tokens per day over the last 30 days as SVG bars (the busiest day full height,
its cost in the bar's title), and spending per model and per user with bars scaled to the largest."""

from __future__ import annotations

import re
from datetime import timedelta

import aiohttp

from bot.agent.usage import utc_today
from bot.store import UsageRecord, UsageTotals
from bot.store.votes import Entry
from tests.web.conftest import Dashboard
from tests.web.test_api import signed_in


async def test_usage_per_day_model_and_user(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    today = utc_today()
    ago = [today - timedelta(days=n) for n in (0, 2, 40)]  # 40 days ago: outside the page's 30 days

    def rec(day_index: int, user: str, model: str, tokens: int, cost: float) -> UsageRecord:
        return UsageRecord(ago[day_index], "telegram:5", user, model, UsageTotals(1, tokens, 0, 0, cost))

    await dashboard.app.store.usage.add([
        rec(0, "telegram:u1", "gpt-x", 800, 0.4), rec(0, "telegram:u2", "claude-y", 200, 0.6),
        rec(1, "telegram:u1", "gpt-x", 500, 0.1), rec(2, "telegram:u9", "old", 9, 9.0)])
    refused = await http.get(dashboard.url("/usage"), allow_redirects=False)
    assert refused.status in (302, 303, 401)  # signed out: no usage figures
    await signed_in(http, dashboard)
    page = await (await http.get(dashboard.url("/usage"))).text()
    assert '<a href="/usage" class="here">Usage</a>' in page
    assert f"Since {(today - timedelta(days=29)).isoformat()}: cost 1.1000, 1500 tokens, 3 model requests" in page
    rects = re.findall(r'<rect x="(\d+)" y="(\d+)" width="8" height="(\d+)"><title>([^<]+)</title>', page)
    assert [(int(h), title) for _, _, h, title in rects] == [
        (50, f"{ago[1].isoformat()}: 500 tokens, 0.1000"), (100, f"{today.isoformat()}: 1000 tokens, 1.0000")]
    assert [int(x) for x, _, _, _ in rects] == [27 * 12 + 2, 29 * 12 + 2]  # the day's slot: today is the last
    assert 'text-anchor="end">1000</text>' in page  # the y axis' top
    models = re.findall(r"<tr><td>([^<]+)</td><td>([\d.]+)</td><td>(\d+) tokens</td>\s*"
                        r'<td class="bar"><svg[^>]*><rect class="share" x="0" y="0" width="([\d.]+)"', page)
    assert models == [("claude-y", "0.6000", "200", "100.0"), ("gpt-x", "0.5000", "1300", "83.3"),  # per model
                      ("telegram:u2", "0.6000", "200", "100.0"), ("telegram:u1", "0.5000", "1300", "83.3")]  # user
    await http.get(dashboard.url("/lang?to=zh&next=%2Fusage"))
    zh = await (await http.get(dashboard.url("/usage"))).text()
    assert "每日令牌数（UTC），最近 30 天" in zh and "按用户，最近 30 天" in zh


async def test_duel_win_rates_per_model_and_agent_by_topic(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    votes = dashboard.app.store.votes
    await votes.entered("telegram:5", "conv1", "d1", [Entry("a1", "gpt-x", "main"), Entry("b1", "claude-y", "main")],
                        "coding")
    await votes.entered("telegram:5", "conv1", "d2", [Entry("a2", "gpt-x", "main"), Entry("b2", "claude-y", "helper")],
                        "travel")
    for node in ("a1", "b2"):
        await votes.vote("telegram:5", "conv1", node, "telegram:u1")
    await votes.vote("telegram:5", "conv1", "b1", "telegram:u2")
    await signed_in(http, dashboard)

    async def tables(query: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        page = await (await http.get(dashboard.url("/usage" + query))).text()
        found = [re.findall(r"<tr><td>([^<]+)</td><td>won (\d+) of (\d+) votes</td><td>([\d.]+)%</td>", table)
                 for table in re.findall(r'<table class="list usage-(?:duels|duel-agents)">(.*?)</table>', page, re.S)]
        return found[0], found[1]

    assert await tables("") == ([("claude-y", "2", "3", "66.7"), ("gpt-x", "1", "3", "33.3")],
                                [("main", "2", "3", "66.7"), ("helper", "1", "1", "100.0")])
    assert await tables("?tag=coding") == ([("claude-y", "1", "2", "50.0"), ("gpt-x", "1", "2", "50.0")],
                                           [("main", "2", "2", "100.0")])
    assert await tables("?tag=travel") == ([("claude-y", "1", "1", "100.0"), ("gpt-x", "0", "1", "0.0")],
                                           [("helper", "1", "1", "100.0"), ("main", "0", "1", "0.0")])
    page = await (await http.get(dashboard.url("/usage?tag=travel"))).text()
    assert '<a href="/usage?tag=travel" class="here">travel (1)</a>' in page and "coding (1)" in page
    await http.get(dashboard.url("/lang?to=zh&next=%2Fusage"))
    assert "各智能体胜率" in await (await http.get(dashboard.url("/usage"))).text()
