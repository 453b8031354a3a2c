"""The usage page: tokens and cost per UTC day over the last 30 days (a bar chart drawn like the overview's),
this period's spending per model and per user (bars scaled to the largest), from the usage totals; and the win
rates in duels (/duel, /vote) per model and per agent, over every vote or those of one topic tag (`?tag=`; an
empty tag is the untagged duels)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aiohttp import web

from bot.agent.usage import utc_today
from bot.store.usage import UsageTotals
from bot.store.votes import By, VoteStore
from bot.web.dashboard import DEPS, render_page
from bot.web.overview import CHART_HEIGHT, bars, nice_top

DAYS = 30
DAY_SLOT = 12  # SVG units per day
TOP = 10  # models and users listed
ROW = 100  # the width of a breakdown row's full bar, in percent


async def usage_page(request: web.Request) -> web.Response:
    usage = request.app[DEPS].store.usage
    today = utc_today()
    since = today - timedelta(days=DAYS - 1)
    per_day = dict(await usage.breakdown(since, "day", DAYS))
    days = [(since + timedelta(days=i)).isoformat() for i in range(DAYS)]
    totals = [per_day.get(day, UsageTotals()) for day in days]
    top = nice_top(max([t.tokens for t in totals] + [1]))
    chart = {"bars": [(*bar, day, t.cost) for bar, day, t in
                      zip(bars([t.tokens for t in totals], top, 2, DAY_SLOT), days, totals, strict=True)],
             "top": top, "half": top / 2, "width": DAYS * DAY_SLOT, "height": CHART_HEIGHT,
             "first": days[0], "last": days[-1]}
    context = {"chart": chart, "since": since.isoformat(), "period": sum(totals, UsageTotals()),
               "models": _rows(await usage.breakdown(since, "model", TOP)),
               "users": _rows(await usage.breakdown(since, "user_id", TOP)),
               **await _duels(request.app[DEPS].store.votes, request.query.get("tag"))}
    return render_page("usage.html", request, context)


async def _duels(votes: VoteStore, tag: str | None) -> dict[str, Any]:
    """Win rates per model and per agent, of the chosen tag (None: every duel), and the tags to choose from."""
    async def rates(by: By) -> list[dict[str, Any]]:
        return [{"name": r.name, "wins": r.wins, "ballots": r.ballots, "width": round(ROW * r.rate, 1)}
                for r in await votes.win_rates(TOP, by=by, topic=tag)]

    return {"duels": await rates("model"), "duel_agents": await rates("agent"), "tag": tag,
            "tags": await votes.topics(TOP)}


def _rows(found: list[tuple[str, UsageTotals]]) -> list[dict[str, Any]]:
    """Each name with its totals and its bar's width against the largest (by cost, else tokens)."""
    most_cost = max([t.cost for _, t in found] + [0.0])
    most_tokens = max([t.tokens for _, t in found] + [1])
    return [{"name": name, "totals": t,
             "width": round(ROW * (t.cost / most_cost if most_cost else t.tokens / most_tokens), 1)}
            for name, t in found]


def add_routes(app: web.Application) -> None:
    app.router.add_get("/usage", usage_page)
