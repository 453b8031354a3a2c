"""One Chromium for every chat, inside bubblewrap with no network, one context per chat, recycled.

Chromium runs as its own process tree in a bwrap sandbox that has no network namespace of its own to reach
anything (`--unshare-all`): every request a page makes is handed to the bot by Playwright's routing and fetched
by the bot through the SSRF guard (guard.py), so DNS rebinding, redirects and subresources all meet the same
checks. Where cgroups are available the whole tree is bounded in memory and processes (cgroups.py); the
browser is also recycled after `RECYCLE_AFTER` calls. Each chat gets its own context (cookies, storage),
closed after `IDLE_CONTEXT` seconds unused or when the browser is recycled, so no chat sees another's cookies.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.agent.tools import cgroups

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

Answer = Callable[[str, Any], Awaitable[None]]
RECYCLE_AFTER = 50  # calls before a fresh browser process
IDLE_CONTEXT = 300.0  # seconds a chat's page is kept between calls
PROCESSES = 256
_READ_ONLY = ("/usr", "/etc/fonts", "/etc/chromium", "/etc/chromium.d", "/etc/alternatives", "/etc/ssl")
_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--mute-audio", "--disable-breakpad"]


def chromium() -> str | None:
    return os.environ.get("BOTHUB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def sandboxed(executable: str) -> list[str]:
    """bwrap around Chromium: the system read-only, a private /tmp and /dev/shm, no network, no capabilities."""
    argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    for path in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if Path(path).is_symlink():
            argv += ["--symlink", str(Path(path).readlink()), path]
        elif Path(path).exists():
            argv += ["--ro-bind", path, path]
    for path in _READ_ONLY:
        argv += ["--ro-bind-try", path, path]
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp",
            "--setenv", "HOME", "/tmp", "--", executable]


@dataclass
class ChatPage:
    context: BrowserContext
    page: Page
    used: float


class BrowserPool:
    """The shared browser: started on first use, each chat's page kept a while, everything closed by `close`."""

    def __init__(self, requests: Answer, sockets: Answer, memory_bytes: int) -> None:
        self._requests, self._sockets = requests, sockets  # (chat, a Route or WebSocketRoute): answer it
        self.memory_bytes = memory_bytes
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._group: cgroups.CommandGroup | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._pages: dict[str, ChatPage] = {}
        self._calls = 0
        self._lock = asyncio.Lock()

    async def page(self, chat: str) -> Page:
        """This chat's page (a new context when it had none), in a running browser."""
        async with self._lock:
            self._calls += 1
            if self._browser is None or not self._browser.is_connected() or self._calls > RECYCLE_AFTER:
                await self._restart()
            await self._forget_idle()
            held = self._pages.get(chat)
            if held is None:
                held = await self._open(chat)
            held.used = time.monotonic()
            return held.page

    async def drop(self, chat: str) -> bool:
        """Close a chat's context (its cookies go with it); False when it had none."""
        held = self._pages.pop(chat, None)
        if held is not None:
            await held.context.close()
        return held is not None

    async def _open(self, chat: str) -> ChatPage:
        assert self._browser is not None
        context = await self._browser.new_context(accept_downloads=False, service_workers="block",
                                                  viewport={"width": 1280, "height": 900})

        async def request(route: Any) -> None:
            await self._requests(chat, route)

        async def socket(route: Any) -> None:
            await self._sockets(chat, route)

        await context.route("**/*", request)
        await context.route_web_socket("**/*", socket)
        held = self._pages[chat] = ChatPage(context, await context.new_page(), time.monotonic())
        return held

    async def _forget_idle(self) -> None:
        now = time.monotonic()
        for chat in [c for c, held in self._pages.items() if now - held.used > IDLE_CONTEXT]:
            await self.drop(chat)

    async def _restart(self) -> None:
        await self._stop()
        from playwright.async_api import async_playwright

        executable = chromium()
        if executable is None:
            raise RuntimeError("the browse tool needs Debian's chromium package: apt-get install chromium")
        argv = sandboxed(executable)
        self._group = cgroups.command_group(self.memory_bytes, PROCESSES)
        if self._group is not None:
            argv = self._group.wrap(argv)
        self._folder = tempfile.TemporaryDirectory(prefix="bothub-browser-")
        launcher = Path(self._folder.name) / "chromium"
        launcher.write_text(f"#!/bin/sh\nexec {shlex.join(argv)} \"$@\"\n")
        launcher.chmod(0o700)
        self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=str(launcher), args=_ARGS, headless=True)
        self._calls = 1

    async def _stop(self) -> None:
        self._pages.clear()
        if self._browser is not None:
            await self._browser.close()
        if self._pw is not None:
            await self._pw.stop()
        if self._group is not None:
            await asyncio.to_thread(self._group.close)
        if self._folder is not None:
            self._folder.cleanup()
        self._browser = self._pw = self._group = self._folder = None

    async def close(self) -> None:
        async with self._lock:
            await self._stop()
