"""`browse`: a real browser for the agent — open a page, read it as text, click and fill by accessible name, look
at a screenshot. Off unless `tools.browser_enabled`, and only for admins (like the shell, it acts on the web on
the bot's behalf). One sandboxed Chromium is shared (launch.py); every request it makes goes through the SSRF
guard (guard.py); each call has a time budget, and a chat's page lives a few minutes between calls.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from typing import Any

from bot.agent.tools.browser.guard import Guard, write_file
from bot.agent.tools.browser.launch import BrowserPool
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.tools.web import UNTRUSTED_END, UNTRUSTED_START
from bot.httpkit.netguard import allow_list

MAX_TEXT = 12_000  # characters of page text returned
NAVIGATIONS = 3  # times the page may move on by itself while it is being read
MAX_CONTROLS = 40
ACTIONS = ("open", "read", "click", "fill", "screenshot", "close")
# The readable part of a page (its main or article, else the body) and what can be clicked or filled there.
_READ = """() => {
  const root = document.querySelector("main, article, [role=main]") || document.body;
  const name = (el) => (el.getAttribute("aria-label") || el.innerText || el.value || el.placeholder ||
    (el.labels && el.labels[0] && el.labels[0].innerText) || el.name || "").trim().replace(/\\s+/g, " ");
  const controls = [...document.querySelectorAll("a[href], button, input, textarea, select, [role=button]")]
    .filter((el) => el.offsetParent !== null).map((el) => [el.tagName.toLowerCase(), el.type || "", name(el)])
    .filter((c) => c[2]);
  return {text: root ? root.innerText : "", controls};
}"""


class Browse:
    def __init__(self, pool: BrowserPool, guard: Guard, timeout: float) -> None:
        self.pool, self.guard, self.timeout = pool, guard, timeout

    async def __call__(self, ctx: ToolContext, action: str, url: str = "", name: str = "", text: str = "") -> str:
        if not ctx.is_admin:
            return "Error: only an admin may use the browser here."
        if action not in ACTIONS:
            return f"Error: action must be one of {', '.join(ACTIONS)}."
        if action == "close":
            return "Closed this chat's browser page." if await self.pool.drop(ctx.chat) else "No page was open."
        self.guard.folders[ctx.chat] = ctx.workdir
        try:
            async with asyncio.timeout(self.timeout):
                page = await self.pool.page(ctx.chat)
                answer = await self._act(ctx, page, action, url, name, text)
        except TimeoutError:
            await self.pool.drop(ctx.chat)  # a page that never finishes is not kept
            answer = f"Error: the page did not finish within {self.timeout:g} s; it was closed."
        except Exception as e:  # Playwright's own errors: a missing element, a crashed page
            first = str(e).splitlines()[0][:300] if str(e) else "failed"
            answer = f"Error: {first}" if type(e).__name__ == "Error" else f"Error: {type(e).__name__}: {first}"
        refused, saved = self.guard.take_notes(ctx.chat)
        notes = [f"Blocked by the SSRF guard: {', '.join(dict.fromkeys(refused))}"] if refused else []
        notes += [f"Downloaded: {', '.join(saved)}"] if saved else []
        return "\n".join([answer, *notes])

    async def _act(self, ctx: ToolContext, page: Any, action: str, url: str, name: str, text: str) -> str:
        if action == "open":
            if not url.strip():
                return "Error: give the URL to open."
            await page.goto(url.strip(), wait_until="domcontentloaded")
        elif action == "click":
            await _control(page, name).click()
            await page.wait_for_load_state("domcontentloaded")
        elif action == "fill":
            await _field(page, name).fill(text)
        elif action == "screenshot":
            return await self._screenshot(ctx, page)
        return await read(page)

    async def _screenshot(self, ctx: ToolContext, page: Any) -> str:
        shot: bytes = await page.screenshot(type="png")
        path = f"screenshots/{time.strftime('%Y%m%d-%H%M%S')}.png"
        await asyncio.to_thread(write_file, ctx.workdir, path, shot)
        if ctx.sees_images:
            ctx.images.append(("image/png", shot))
            return f"Screenshot of {page.url} saved as {path}; it is shown to you below."
        return f"Screenshot of {page.url} saved as {path} (this model cannot see images; send_file can post it)."


def _control(page: Any, name: str) -> Any:
    """A button or link by its accessible name, else any element with that text: the first one."""
    by_role = page.get_by_role("button", name=name).or_(page.get_by_role("link", name=name))
    return by_role.or_(page.get_by_text(name)).first


def _field(page: Any, name: str) -> Any:
    return page.get_by_label(name).or_(page.get_by_placeholder(name)).or_(page.get_by_role("textbox", name=name)).first


async def read(page: Any) -> str:
    """The page as the model reads it: where it is, its readable text, and the controls it can use by name."""
    found = await _evaluate(page)
    lines_of = (" ".join(line.split()) for line in str(found["text"]).splitlines())
    body = "\n".join(line for line in lines_of if line)
    body = body if len(body) <= MAX_TEXT else body[:MAX_TEXT] + "\n… [page cut]"
    controls = [f"- {tag}{'/' + kind if kind and tag == 'input' else ''}: {label[:80]}"
                for tag, kind, label in found["controls"][:MAX_CONTROLS]]
    lines = [f"URL: {page.url}", f"Title: {await page.title()}", UNTRUSTED_START, body, UNTRUSTED_END]
    if controls:
        lines += ["Controls (click or fill them by name):", *controls]
    return "\n".join(lines)


async def _evaluate(page: Any) -> Any:
    """The reading script's result; a page that navigates on its own (the guard's redirect to where a site
    sent it, a script's or a meta refresh) ends the script's context, so it runs again once the next has loaded."""
    for _ in range(NAVIGATIONS - 1):
        try:
            return await page.evaluate(_READ)
        except Exception as e:  # Playwright's Error; only this message says the page moved on meanwhile
            if "context was destroyed" not in str(e):
                raise
        await page.wait_for_load_state("domcontentloaded")
    return await page.evaluate(_READ)


def register(registry: ToolRegistry, allow_hosts: list[str], timeout: float, memory_bytes: int,
             max_download: int) -> BrowserPool:
    """The tool, and the pool the app closes at shutdown. RuntimeError when Playwright is not installed."""
    if importlib.util.find_spec("playwright") is None:
        raise RuntimeError("tools.browser_enabled needs Playwright: .venv/bin/pip install -e '.[browser]' "
                           "(and Debian's chromium)")
    guard = Guard(allow_list(allow_hosts), max_download)
    pool = BrowserPool(guard.answer_request, guard.answer_socket, memory_bytes)
    browse = Browse(pool, guard, timeout)
    registry.register(
        "browse",
        "A real web browser (public sites only). action: open (url), read, click (name: a button or link's text), "
        "fill (name: a field's label, text), screenshot (you see it when you can see images), close. Each answer "
        "is the page's text and the controls it has.",
        {"type": "object", "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "url": {"type": "string", "description": "For open: a full http(s) URL"},
            "name": {"type": "string", "description": "For click and fill: the visible name or label"},
            "text": {"type": "string", "description": "For fill: what to type"},
        }, "required": ["action"]},
        browse,
    )
    return pool
