"""Every request a page makes, fetched by the bot through the SSRF guard, never by the browser itself.

The sandboxed Chromium has no network (launch.py); Playwright hands each request to `answer_request` and each
WebSocket to `answer_socket`. The URL is vetted like `web_fetch`'s (public addresses only, pinned between check
and connect), so subresources, redirects (a redirect is answered to the browser, whose next request comes
back here) and WebSockets to loopback, private ranges or metadata addresses are refused at the request. A
navigation that answers with a file is saved into the chat's folder (through the jail, under the media cap)
instead of being shown. Refusals are remembered per chat so the tool can tell the model what was blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
from pathlib import Path
from typing import Any

import aiohttp
from yarl import URL

from bot import jail
from bot.httpkit.netguard import Lookup, PinnedResolver, Refused, guarded_session, system_lookup, vet

MAX_RESPONSE = 10 * 1024 * 1024  # bytes of one response passed to the page
_DROPPED = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"})
_SHOWN = ("text/", "image/", "font/", "application/javascript", "application/json", "application/xhtml+xml",
          "application/xml", "application/wasm", "application/font", "image/svg+xml")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._ -]")
_FILENAME = re.compile(r'filename="?([^";]+)"?')
MAX_REDIRECTS = 5


class Guard:
    def __init__(self, allow_hosts: frozenset[str], max_download: int, lookup: Lookup = system_lookup,
                 timeout: float = 20.0) -> None:
        self.allow_hosts, self.max_download, self.lookup = allow_hosts, max_download, lookup
        self.timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=10)
        self.folders: dict[str, Path] = {}  # chat → its folder, set by the tool before each call
        self.refused: dict[str, list[str]] = {}  # chat → what was blocked since the tool last read it
        self.saved: dict[str, list[str]] = {}  # chat → files saved since the tool last read it
        self._sockets: set[asyncio.Task[None]] = set()

    def take_notes(self, chat: str) -> tuple[list[str], list[str]]:
        return self.refused.pop(chat, []), self.saved.pop(chat, [])

    async def answer_request(self, chat: str, route: Any) -> None:
        request = route.request
        url = URL(request.url)
        if url.scheme in ("data", "blob", "about"):
            await route.continue_()  # in the page itself: nothing goes out
            return
        session, resolver = guarded_session(self.timeout, "Mozilla/5.0 (bothub browse)")
        try:
            async with session:
                fetched = await self._fetch(session, resolver, request, url)
        except Refused as e:
            self.refused.setdefault(chat, []).append(str(e))
            await route.abort("blockedbyclient")
            return
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
            await route.abort("failed")
            return
        final, status, headers, body, is_file = fetched
        if request.is_navigation_request() and final != url:  # the browser must show the page where it ended
            await route.fulfill(status=200, content_type="text/html",
                                body=f'<meta http-equiv="refresh" content="0;url={html.escape(str(final))}">')
        elif request.is_navigation_request() and is_file and status == 200:
            await self._save(chat, route, final, headers, body)
        else:
            await route.fulfill(status=status, headers=headers, body=body)

    async def _fetch(self, session: aiohttp.ClientSession, resolver: PinnedResolver, request: Any, url: URL
                     ) -> tuple[URL, int, dict[str, str], bytes, bool]:
        """The request, its redirects followed here, each hop vetted (Chromium follows none of them itself)."""
        method, data = request.method, request.post_data_buffer
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", *_DROPPED)}
        for _ in range(MAX_REDIRECTS + 1):
            try:
                await vet(url, self.allow_hosts, resolver, self.lookup)
            except Refused as e:
                raise Refused(f"{url.host}: {e}") from None
            async with session.request(method, url, headers=headers, data=data, allow_redirects=False) as resp:
                location = resp.headers.get("Location")
                if resp.status in (301, 302, 303, 307, 308) and location:
                    url = url.join(URL(location))
                    if resp.status in (301, 302, 303):
                        method, data = "GET", None
                    continue
                body = await resp.content.read(MAX_RESPONSE + 1)
                kept = {k: v for k, v in resp.headers.items() if k.lower() not in _DROPPED}
                return url, resp.status, kept, body[:MAX_RESPONSE], _is_file(resp)
        raise aiohttp.TooManyRedirects(request.url, ())

    async def _save(self, chat: str, route: Any, url: URL, headers: dict[str, str], body: bytes) -> None:
        """A download: into downloads/ of the chat's folder when it fits the cap; the page says where it went."""
        given = _FILENAME.search(headers.get("Content-Disposition", ""))
        name = _UNSAFE_NAME.sub("_", given.group(1) if given else (url.name or "download"))[:100] or "download"
        folder = self.folders.get(chat)
        if folder is None or len(body) > self.max_download:
            note = f"not saved: {name} is larger than {self.max_download} bytes" if folder else "not saved"
        else:
            path = f"downloads/{name}"
            await asyncio.to_thread(write_file, folder, path, body)
            self.saved.setdefault(chat, []).append(f"{path} ({len(body)} bytes)")
            note = f"saved as {path}"
        await route.fulfill(status=200, content_type="text/plain", body=f"Download {note}.")

    async def answer_socket(self, chat: str, ws: Any) -> None:
        url = URL(ws.url)
        session, resolver = guarded_session(self.timeout, "Mozilla/5.0 (bothub browse)")
        try:
            await vet(url.with_scheme("https" if url.scheme == "wss" else "http"), self.allow_hosts, resolver,
                      self.lookup)
            upstream = await session.ws_connect(url)
        except (Refused, aiohttp.ClientError, OSError, TimeoutError, ValueError) as e:
            if isinstance(e, Refused):
                self.refused.setdefault(chat, []).append(f"{url.host}: {e}")
            await session.close()
            await ws.close(code=1008, reason="refused")
            return
        ws.on_message(lambda message: self._forward(upstream, message))
        task = asyncio.create_task(self._pump(upstream, ws, session))
        self._sockets.add(task)
        task.add_done_callback(self._sockets.discard)

    def _forward(self, upstream: aiohttp.ClientWebSocketResponse, message: str | bytes) -> None:
        send = upstream.send_str(message) if isinstance(message, str) else upstream.send_bytes(message)
        task = asyncio.ensure_future(send)
        self._sockets.add(task)
        task.add_done_callback(self._sockets.discard)

    @staticmethod
    async def _pump(upstream: aiohttp.ClientWebSocketResponse, ws: Any, session: aiohttp.ClientSession) -> None:
        try:
            async for message in upstream:
                if message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                    ws.send(message.data)
        finally:
            await session.close()
            with contextlib.suppress(Exception):  # the page may be gone already
                await ws.close()


def _is_file(resp: aiohttp.ClientResponse) -> bool:
    disposition = resp.content_disposition
    if disposition is not None and disposition.type == "attachment":
        return True
    return not resp.content_type.startswith(_SHOWN)


def write_file(folder: Path, path: str, data: bytes) -> None:
    """Write (replace) a file in a chat folder through the jail; blocking."""
    with open(jail.open_file(folder, path, write=True), "wb") as out:
        out.truncate()
        out.write(data)

