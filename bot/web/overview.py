"""The overview: platforms, traffic, waits for the first text, tokens by model, providers, cost, queues, errors; and
the live feed of events (SSE) the overview page shows as they happen."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

from aiohttp import web

from bot.agent.usage import utc_today
from bot.httpkit import sse
from bot.ops.activity import Event
from bot.web.dashboard import DEPS, render_page

CHART_HEIGHT = 100  # the plot area of the traffic chart, in SVG units; axes and labels sit around it
SLOT = 10  # SVG units per minute: an "in" bar and an "out" bar side by side
TOP_QUEUES = 10
FEEDS: web.AppKey[set[asyncio.Queue[str | None]]] = web.AppKey("dashboard_feeds")


def nice_top(value: int) -> int:
    """The y axis' top: the busiest minute rounded up to 1, 2 or 5 × 10ⁿ (at least 1)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if value <= step * factor:
                return step * factor
        step *= 10


def bars(counts: list[int], top: int, offset: int = 1, slot: int = SLOT) -> list[tuple[int, int, int, int]]:
    """Server-drawn SVG bars for `counts` under the axis' `top`: (x, y, height, count), a non-zero count at
    least a unit high."""
    heights = [max(round(c / top * CHART_HEIGHT), 1) if c else 0 for c in counts]
    return [(i * slot + offset, CHART_HEIGHT - h, h, c) for i, (h, c) in enumerate(zip(heights, counts, strict=True))]


def traffic_chart(incoming: list[int], outgoing: list[int]) -> dict[str, Any]:
    """Both series on one server-drawn SVG: (x, y, height, count) bars, the y axis' top and the minutes shown."""
    top = nice_top(max([*incoming, *outgoing, 1]))
    return {"in": bars(incoming, top, 1), "out": bars(outgoing, top, 5), "top": top, "half": top / 2,
            "width": len(incoming) * SLOT, "height": CHART_HEIGHT, "minutes": len(incoming)}


async def overview_page(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    activity = deps.metrics.activity
    _, adapters = deps.health.readiness()
    for name, state in adapters.items():
        state["restarts"] = int(deps.metrics.registry.get_sample_value(
            "bothub_adapter_restarts_total", {"platform": name}) or 0)
    incoming, outgoing = activity.per_minute("in"), activity.per_minute("out")
    p50, p95 = activity.first_text()
    lanes = sorted(deps.services.lanes.active(), key=lambda lane: -lane.queued)[:TOP_QUEUES]
    today = utc_today()
    usage = deps.store.usage
    context = {
        "adapters": adapters, "chart": traffic_chart(incoming, outgoing),
        "in_last": sum(incoming[-5:]) / 5, "out_last": sum(outgoing[-5:]) / 5, "p50": p50, "p95": p95,
        "tokens": sorted(activity.tokens_today().items(), key=lambda kv: -kv[1]),
        "lanes": [(lane.name, lane.queued, lane.busy) for lane in lanes], "errors": list(activity.errors),
        "providers": deps.metrics.providers(),
        "cost_today": await usage.totals(today), "cost_month": await usage.totals(today.replace(day=1)),
        "top_chats": await usage.breakdown(today.replace(day=1), "chat", TOP_QUEUES),
        "agents": deps.metrics.agents.rows(),
    }
    return render_page("overview.html", request, context)


async def live_feed(request: web.Request) -> web.StreamResponse:
    """Every event as it happens: messages in and out, tool calls, first texts, runs, errors."""
    activity = request.app[DEPS].metrics.activity
    queue: asyncio.Queue[str | None] = asyncio.Queue(sse.QUEUE_LIMIT)

    def forward(event: Event) -> None:
        if not sse.offer(queue, sse.frame("event", asdict(event))):
            activity.unsubscribe(forward)

    activity.subscribe(forward)
    request.app[FEEDS].add(queue)
    try:
        return await sse.serve(request, queue)
    finally:
        activity.unsubscribe(forward)
        request.app[FEEDS].discard(queue)


async def _end_feeds(app: web.Application) -> None:
    """Server stopping: open feeds end now instead of holding the shutdown for their keepalive."""
    feeds = app[FEEDS]
    for queue in [*feeds]:
        sse.end(queue)


def add_routes(app: web.Application) -> None:
    feeds: set[asyncio.Queue[str | None]] = set()
    app[FEEDS] = feeds
    app.on_shutdown.append(_end_feeds)
    app.router.add_get("/overview", overview_page)
    app.router.add_get("/events", live_feed)
