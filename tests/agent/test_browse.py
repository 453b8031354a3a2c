"""The browse tool with the real Chromium in bubblewrap, against local pages: reading, a form filled and sent by
name, a screenshot the vision model receives, and the SSRF guard at the request level — subresources, a
redirect and a WebSocket to loopback or metadata refused — a page that never loads ended by the budget, a
download saved into the chat's folder, and no cookie carried from one chat to another.

The test site is `localhost` (allowed, as tests allow hosts for web_fetch); `127.0.0.1` and `169.254.169.254`
stand for what a page must never reach."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from bot.agent.loop import AgentLoop
from bot.agent.tools import browser
from bot.agent.tools.browser.launch import BrowserPool
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.workspace import init_workspace
from bot.cli import doctor
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.serve import serve_local
from tests.harness import make_config

ARTICLE = """<!doctype html><html><head><title>Trip notes</title></head><body>
<nav>Home · About · Login</nav>
<main><h1>Lisbon in May</h1><p>Flights are cheapest on Tuesdays.</p>
<form method="post" action="/thanks"><label>Your name <input name="who"></label><button>Send it</button></form>
</main></body></html>"""


@dataclass
class Site:
    port: int = 0
    hits: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://localhost:{self.port}{path}"


@pytest_asyncio.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()

    async def handle(request: web.Request) -> web.StreamResponse:
        state.hits.append(f"{request.host.split(':')[0]} {request.method} {request.path}")
        loopback = f"http://127.0.0.1:{state.port}"
        pages = {
            "/article": ARTICLE,
            "/leaky": f'<title>Leaky</title><img src="{loopback}/secret.png"><p>hello</p>'
                      f'<script>fetch("http://169.254.169.254/latest/meta-data/")</script>',
            "/socket": f'<title>Socket</title><script>new WebSocket("ws://127.0.0.1:{state.port}/ws")</script>',
            "/cookie": f"<title>Cookie</title><p>{request.headers.get('Cookie', 'no cookie')}</p>",
            "/talk": f'<title>Talk</title><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><p id="said">-</p>'
                     f'<script>const ws = new WebSocket("ws://localhost:{state.port}/echo");'
                     'ws.onopen = () => ws.send("ping");'
                     'ws.onmessage = (m) => document.getElementById("said").textContent = m.data;</script>',
        }
        if request.path == "/echo":
            ws = web.WebSocketResponse()
            await ws.prepare(request)
            async for message in ws:
                await ws.send_str(f"echoed {message.data}")
            return ws
        if request.path in pages:
            response = web.Response(text=pages[request.path], content_type="text/html")
            if request.path == "/cookie":
                response.set_cookie("session", "chat-a-secret")
            return response
        if request.path == "/thanks":
            return web.Response(text=f"<title>Thanks</title><main>Thank you, {(await request.post())['who']}!</main>",
                                content_type="text/html")
        if request.path == "/to-loopback":
            raise web.HTTPFound(f"{loopback}/secret")
        if request.path in ("/hop", "/loop"):
            raise web.HTTPFound("/article" if request.path == "/hop" else "/loop")
        if request.path == "/big.bin":
            return web.Response(body=bytes(2048), content_type="application/octet-stream")
        if request.path == "/report.zip":
            return web.Response(body=b"PK\x03\x04zipped", content_type="application/zip",
                                headers={"Content-Disposition": 'attachment; filename="report.zip"'})
        if request.path == "/hang":
            await asyncio.sleep(60)
        return web.Response(status=404, text="secret stuff")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner, state.port = await serve_local(app, shutdown_timeout=0.2)  # the hanging page must not hold teardown
    yield state
    await runner.cleanup()


@pytest_asyncio.fixture
async def tools() -> AsyncIterator[ToolRegistry]:
    registry = ToolRegistry()
    pool: BrowserPool = browser.register(registry, ["localhost"], timeout=8.0, memory_bytes=1024 * 2**20,
                                         max_download=1024)
    yield registry
    await pool.close()


def admin(tmp_path: Path, chat: str = "test:1", **extra: object) -> ToolContext:
    (tmp_path / chat).mkdir(exist_ok=True)
    return ToolContext(chat=chat, workdir=tmp_path / chat, **{"is_admin": True, **extra})  # type: ignore[arg-type]


async def browse(tools: ToolRegistry, ctx: ToolContext, **arguments: str) -> str:
    return await tools.execute("browse", json.dumps(arguments), ctx)


async def test_read_a_page_then_fill_and_send_its_form_by_name(tools: ToolRegistry, site: Site,
                                                               tmp_path: Path) -> None:
    ctx = admin(tmp_path)
    page = await browse(tools, ctx, action="open", url=site.url("/article"))
    assert "Title: Trip notes" in page and "Flights are cheapest on Tuesdays." in page
    assert "Home · About" not in page  # the main part, not the navigation
    assert "- button: Send it" in page and "- input/text: Your name" in page
    await browse(tools, ctx, action="fill", name="Your name", text="Ann")
    thanks = await browse(tools, ctx, action="click", name="Send it")
    assert "Thank you, Ann!" in thanks and "localhost POST /thanks" in site.hits
    assert "Error: only an admin" in await browse(tools, admin(tmp_path, "test:2", is_admin=False), action="read")


async def test_subresources_redirects_and_sockets_to_internal_addresses_are_refused(
        tools: ToolRegistry, site: Site, tmp_path: Path) -> None:
    ctx = admin(tmp_path)
    leaky = await browse(tools, ctx, action="open", url=site.url("/leaky"))
    assert "hello" in leaky and "127.0.0.1: 127.0.0.1 is a loopback address" in leaky
    await asyncio.sleep(0.5)  # the page's script runs after load
    blocked = leaky + await browse(tools, ctx, action="read")
    assert "169.254.169.254" in blocked
    redirected = await browse(tools, ctx, action="open", url=site.url("/to-loopback"))
    assert "Blocked by the SSRF guard: 127.0.0.1" in redirected
    socket = await browse(tools, ctx, action="open", url=site.url("/socket"))
    await asyncio.sleep(0.5)
    socket += await browse(tools, ctx, action="read")
    assert "Blocked by the SSRF guard: 127.0.0.1" in socket
    assert not [hit for hit in site.hits if hit.startswith("127.0.0.1")]  # nothing internal was ever reached
    direct = await browse(tools, ctx, action="open", url=f"http://127.0.0.1:{site.port}/secret")
    assert "secret stuff" not in direct and "Blocked by the SSRF guard" in direct


async def test_a_hanging_page_is_ended_by_the_budget_and_a_download_is_saved(
        tools: ToolRegistry, site: Site, tmp_path: Path) -> None:
    ctx = admin(tmp_path)
    ended = await browse(tools, ctx, action="open", url=site.url("/hang"))
    assert ended.startswith("Error: the page did not finish within 8 s")
    saved = await browse(tools, ctx, action="open", url=site.url("/report.zip"))
    assert "Downloaded: downloads/report.zip (10 bytes)" in saved
    assert (ctx.workdir / "downloads" / "report.zip").read_bytes() == b"PK\x03\x04zipped"


async def test_an_allowed_socket_is_relayed_both_ways_and_redirects_end_where_the_site_sends_them(
        tools: ToolRegistry, site: Site, tmp_path: Path) -> None:
    ctx = admin(tmp_path)
    talk = await browse(tools, ctx, action="open", url=site.url("/talk"))
    for _ in range(50):  # the page's script talks after load
        if "echoed ping" in talk:
            break
        await asyncio.sleep(0.1)
        talk = await browse(tools, ctx, action="read")
    assert "echoed ping" in talk and "localhost GET /echo" in site.hits and "Blocked" not in talk
    hopped = await browse(tools, ctx, action="open", url=site.url("/hop"))
    assert "URL: " + site.url("/article") in hopped and "Flights are cheapest" in hopped
    big = await browse(tools, ctx, action="open", url=site.url("/big.bin"))
    assert "Download not saved: big.bin is larger than 1024 bytes" in big
    assert not (ctx.workdir / "downloads").exists()
    looped = await browse(tools, ctx, action="open", url=site.url("/loop"))  # last: Chromium shows its error page
    assert looped.startswith("Error: ") and site.hits.count("localhost GET /loop") == 6  # 1 + 5 redirects


async def test_no_cookie_crosses_from_one_chat_to_another(tools: ToolRegistry, site: Site, tmp_path: Path) -> None:
    first, second = admin(tmp_path, "test:a"), admin(tmp_path, "test:b")
    assert "no cookie" in await browse(tools, first, action="open", url=site.url("/cookie"))
    assert "session=chat-a-secret" in await browse(tools, first, action="open", url=site.url("/cookie"))
    assert "no cookie" in await browse(tools, second, action="open", url=site.url("/cookie"))
    assert await browse(tools, first, action="close") == "Closed this chat's browser page."
    assert "no cookie" in await browse(tools, first, action="open", url=site.url("/cookie"))


async def test_a_screenshot_reaches_the_vision_model(tools: ToolRegistry, site: Site, tmp_path: Path,
                                                     fake: FakeOpenAI, make_llm: MakeLLM) -> None:
    ctx = admin(tmp_path, sees_images=True)
    fake.script(ToolCalls([("b1", "browse", json.dumps({"action": "open", "url": site.url("/article")}))]),
                ToolCalls([("b2", "browse", '{"action": "screenshot"}')]), Text("It shows trip notes."))
    loop = AgentLoop(await make_llm(), tools, model="fake-model", max_turns=5)
    [_ async for _ in loop.run([{"role": "user", "content": "look at it"}], ctx)]
    shown = fake.requests[2]["body"]["messages"][-1]
    assert shown["role"] == "user" and shown["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    [shot] = list((ctx.workdir / "screenshots").iterdir())
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert not ctx.images  # shown once, then gone


async def test_doctor_names_what_the_browser_needs(tmp_path: Path, fake: FakeOpenAI,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cfg, env = make_config(tmp_path, fake.base_url, config={"tools": {"browser_enabled": True}})
    init_workspace(cfg.workspace_dir)
    await doctor.run(cfg, env)
    assert "✔ browse: Chromium in bubblewrap, no network of its own (requests through the SSRF guard), 1024 MB, " \
           "30 s per call, admins only" in capsys.readouterr().out.splitlines()
