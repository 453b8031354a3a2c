"""Headless Chromium for the dashboard tests: Debian's `chromium` driven by Playwright (no browser download).

Screenshots go to docs/img/ when BOTHUB_SCREENSHOTS=1 (`make screenshots`), else to the test's tmp dir,
so a plain test run leaves the repository untouched but still takes every picture.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import BrowserContext, Dialog, Page, async_playwright

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def chromium_path() -> str:
    found = os.environ.get("BOTHUB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("the browser tests need Debian's chromium package: apt-get install chromium")
    return found


@dataclass
class Browser:
    context: BrowserContext
    page: Page
    shots: Path
    dialogs: list[str] = field(default_factory=list)

    async def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=False)
        return path


@asynccontextmanager
async def chromium(tmp_path: Path) -> AsyncIterator[Browser]:
    shots = REPO / "docs" / "img" if os.environ.get("BOTHUB_SCREENSHOTS") == "1" else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as pw:
        context = await pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 800}, locale="en-US",
        )
        try:
            context.set_default_timeout(10_000)
            page = context.pages[0] if context.pages else await context.new_page()
            browser = Browser(context, page, shots)

            async def on_dialog(dialog: Dialog) -> None:
                browser.dialogs.append(dialog.message)
                await dialog.dismiss()

            page.on("dialog", on_dialog)
            yield browser
        finally:
            await context.close()
