"""Dashboard: server time per page with 10⁵ stored messages, and a 10 000-message tree opened in Chromium.

Server time is measured from the client on 127.0.0.1 (request sent → whole body read), so it includes the
HTTP round trip; the store holds 900 chats of 100 messages (English and Chinese) plus one 10 000-message tree.
"""

from __future__ import annotations

import random
import re
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import Section, fake_llm, ms, percentile, run_standalone
from bot.store.sqlite import SqliteStore
from bot.tree.model import Conversation, Message, utc_now
from tests.harness import running_app
from tests.web.browser import chromium
from tests.web.seed import big_tree

CHATS, PER_CHAT, BIG = 900, 100, 10_000
RUNS, WARMUP = 40, 3
PAGE_P95 = 0.050  # seconds
TREE_OPEN = 1.0  # seconds, in the browser
PASSWORD = "bench-password"
WORDS = ["weather", "report", "deploy", "python", "tree", "branch", "天气", "北京", "周报", "部署", "数据库", "分支"]


async def fill(store: SqliteStore) -> tuple[str, str, str]:
    """10⁵ messages; returns (a chat, its conversation, the big tree's conversation)."""
    rng, now, serial = random.Random(7), utc_now(), 0
    chat = conv_id = ""
    for c in range(CHATS):
        conv = Conversation("", root_id=f"r{c:07x}")
        for i in range(PER_CHAT):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 30)))
            conv.add_message(Message(f"{serial:08x}", "user" if i % 2 == 0 else "assistant", None, text, now))
            serial += 1
        info = await store.conversations.import_tree(f"telegram:{1000 + c}", conv)
        chat, conv_id = info.chat, info.id
    big = await big_tree(store, "telegram:big", BIG)
    return chat, conv_id, big.id


async def timed(http: aiohttp.ClientSession, url: str) -> list[float]:
    times = []
    for i in range(WARMUP + RUNS):
        started = time.perf_counter()
        async with http.get(url) as response:
            await response.read()
            assert response.status == 200, (url, response.status)
        if i >= WARMUP:
            times.append(time.perf_counter() - started)
    return times


async def run() -> Section:
    sec = Section(f"Dashboard: {CHATS * PER_CHAT + BIG:,} stored messages, {RUNS} requests per page")
    async with fake_llm() as base_url:
        with tempfile.TemporaryDirectory() as d:
            config = {"log_level": "WARNING", "server": {"enabled": True, "port": 0}}
            async with running_app(Path(d), base_url, config=config,
                                   env={"BOTHUB_ADMIN_PASSWORD": PASSWORD}) as app:
                chat, conv, big = await fill(app.store)
                base = f"http://127.0.0.1:{app.web_port}"
                jar = aiohttp.CookieJar(unsafe=True)
                async with aiohttp.ClientSession(cookie_jar=jar) as http:
                    await http.post(base + "/login", data={"password": PASSWORD})
                    node = (await (await http.get(f"{base}/api/v1/tree?chat={chat}&conv={conv}")).json())["nodes"][40]
                    pages = {
                        "/chats": "/chats",
                        "/chats?q=… (filtered)": "/chats?q=telegram:18&platform=telegram",
                        "/chats/view (a chat)": f"/chats/view?chat={chat}",
                        "/tree (100 messages)": f"/tree?chat={chat}&conv={conv}",
                        "/tree/node (detail + path)": f"/tree/node?chat={chat}&conv={conv}&node={node['id']}",
                        "/search?q=weather report": "/search?q=weather+report",
                        "/search?q=北京天气 (CJK)": "/search?q=北京+天气",
                        "/search?q=rare (no hit)": "/search?q=nowhere-to-be-found",
                        "/api/v1/chats": "/api/v1/chats",
                    }
                    for name, path in pages.items():
                        times = await timed(http, base + path)
                        sec.check(f"{name} p95", percentile(times, 95) * 1000, PAGE_P95 * 1000, "ms")
                        sec.add(f"{name} p50", ms(percentile(times, 50)))
                    big_times = await timed(http, f"{base}/tree?chat=telegram:big&conv={big}")
                    sec.add("/tree (10 000 messages) server p50", ms(percentile(big_times, 50)))
                    sec.add("/tree (10 000 messages) server p95", ms(percentile(big_times, 95)))
                    sec.check("10 000-message tree opened in Chromium (worst of 5)",
                              await browser_open(base, big) * 1000, TREE_OPEN * 1000, "ms", fmt=".0f")
    return sec


async def browser_open(base: str, conv: str) -> float:
    """Sign in, then open the big tree until its cursor is on screen; the slowest of five."""
    with tempfile.TemporaryDirectory() as d:
        async with chromium(Path(d)) as browser:
            page = browser.page
            await page.goto(base + "/login")
            await page.fill("input[name=password]", PASSWORD)
            await page.click("form.login button[type=submit]")
            await page.wait_for_url(re.compile(r".*/overview$"))
            worst = 0.0
            for _ in range(5):
                started = time.perf_counter()
                await page.goto(f"{base}/tree?chat=telegram:big&conv={conv}")
                await page.locator("#tree a.node.cursor").wait_for()
                worst = max(worst, time.perf_counter() - started)
            return worst


if __name__ == "__main__":
    run_standalone(run)
