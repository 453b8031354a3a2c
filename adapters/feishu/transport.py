"""Feishu Open API over one long-lived aiohttp session, with our own tenant-token lifecycle.

lark-oapi fetches its tenant token with blocking `requests` (it would freeze the hub's loop), opens a new
httpx client per call (no keep-alive, ~50 ms CPU each) and costs ~160 MB to import, so the adapter speaks
the HTTP API itself: REST here, the long connection (same session) in longconn.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import aiohttp

from bot.httpkit.fence import fenced_trace

log = logging.getLogger(__name__)

DOMAINS = {"feishu": "https://open.feishu.cn", "lark": "https://open.larksuite.com"}
INVALID_TOKEN_CODES = frozenset({99991661, 99991663, 99991668})
TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=300, sock_read=60)
Form = Mapping[str, str | tuple[str, bytes]]  # multipart fields; a file is (file name, bytes)


def refused(base_url: str, error: ApiError) -> str:
    """Why the app was refused, and the two causes a person can fix: the credentials, or the domain (a
    Lark app does not exist on Feishu and the other way round, which looks like a bad secret)."""
    other = {DOMAINS["feishu"]: "lark", DOMAINS["lark"]: "feishu"}.get(base_url)
    said = f"{base_url.split('//')[-1]} refused the app: {error.msg} ({error.code})."
    check = "check FEISHU_APP_ID / FEISHU_APP_SECRET and that the app has the Bot capability."
    if other is None:
        return f"{said} Check{check[5:]}"
    home = DOMAINS[other].split("//")[-1]
    return f"{said} If the app was created on {home}, set FEISHU_DOMAIN={other}; otherwise {check}"


def resolve_domain(domain: str | None) -> str:
    """"feishu" (default), "lark", or an origin URL such as a test server's."""
    value = (domain or "feishu").strip().rstrip("/")
    if value.lower() in DOMAINS:
        return DOMAINS[value.lower()]
    if value.startswith(("https://", "http://")):
        return value
    raise ValueError(f'feishu domain must be "feishu", "lark" or a URL, not {value!r}')


class ApiError(Exception):
    """The platform answered with a non-zero code (errors are data in Feishu's API)."""

    def __init__(self, status: int, code: int, msg: str, retry_after: float | None = None) -> None:
        super().__init__(f"feishu HTTP {status} code {code}: {msg}")
        self.status, self.code, self.msg, self.retry_after = status, code, msg, retry_after


class FeishuHttp:
    """Authenticated JSON calls; the token is refreshed in the background at half its lifetime."""

    pause: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)  # the refresher's wait; tests drive it

    def __init__(self, base_url: str, app_id: str, app_secret: str, timeout: float = 15.0,
                 proxy: str | None = None) -> None:
        self.base_url = base_url
        self._proxy = proxy  # the REST calls and the long connection's websocket go through it
        self._app_id, self._app_secret = app_id, app_secret
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._token = ""
        self._token_lock = asyncio.Lock()
        self._refresher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=self._timeout, proxy=self._proxy,
                                              trace_configs=[fenced_trace()])  # the fence's last check
        lifetime = await self._fetch_token()
        self._refresher = asyncio.create_task(self._refresh_forever(lifetime), name="feishu-token")

    async def close(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        if self._session is not None:
            await self._session.close()
        self._refresher = self._session = None
        self._token = ""

    @property
    def session(self) -> aiohttp.ClientSession:
        """The live session (for the long connection's endpoint call and websocket)."""
        assert self._session is not None, "FeishuHttp.start() not called"
        return self._session

    async def call(
        self, method: str, path: str, *, params: dict[str, str] | None = None, body: Any = None,
        form: Form | None = None,
    ) -> dict[str, Any]:
        """Return the whole JSON answer (code 0); raise ApiError otherwise. One retry on a stale token.

        `form` sends multipart/form-data instead of a JSON body (uploads)."""
        token = await self.token()
        try:
            return await self._request(method, path, token, params, body, form)
        except ApiError as e:
            if e.code not in INVALID_TOKEN_CODES:
                raise
            await self._refresh_after(token)
            return await self._request(method, path, self._token, params, body, form)

    @contextlib.asynccontextmanager
    async def download(self, path: str, params: dict[str, str]) -> AsyncIterator[aiohttp.StreamReader]:
        """A binary resource as a stream; an error answer (JSON) raises ApiError."""
        assert self._session is not None, "FeishuHttp.start() not called"
        headers = {"Authorization": f"Bearer {await self.token()}"}
        async with self._session.get(self.base_url + path, params=params, headers=headers,
                                     timeout=DOWNLOAD_TIMEOUT, allow_redirects=False) as resp:
            if resp.status != 200 or resp.content_type == "application/json":
                await _decode(resp)
                raise ApiError(resp.status, -1, "no file in the answer")
            yield resp.content

    async def token(self) -> str:
        if not self._token:
            await self._refresh_after("")
        return self._token

    async def _request(
        self, method: str, path: str, token: str, params: dict[str, str] | None, body: Any, form: Form | None
    ) -> dict[str, Any]:
        assert self._session is not None, "FeishuHttp.start() not called"
        headers = {"Authorization": f"Bearer {token}"}
        data = _form_data(form) if form is not None else None
        async with self._session.request(
            method, self.base_url + path, params=params, json=body, data=data, headers=headers
        ) as resp:
            return await _decode(resp)

    async def _refresh_after(self, stale: str) -> None:
        """Refresh unless another caller already replaced the stale token."""
        async with self._token_lock:
            if self._token == stale:
                await self._fetch_token()

    async def _fetch_token(self) -> float:
        assert self._session is not None
        payload = {"app_id": self._app_id, "app_secret": self._app_secret}
        async with self._session.post(self.base_url + TOKEN_PATH, json=payload) as resp:
            data = await _decode(resp)
        self._token = str(data["tenant_access_token"])
        return float(data.get("expire", 7200))

    async def _refresh_forever(self, lifetime: float) -> None:
        while True:
            await self.pause(max(lifetime / 2, 1.0))
            try:
                async with self._token_lock:
                    lifetime = await self._fetch_token()
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                log.warning("feishu token refresh failed, retrying soon: %s", e)
                lifetime = 60.0


def data_field(answer: dict[str, Any], key: str) -> str:
    """A string out of the answer's `data`; a malformed answer is an ApiError, not a KeyError."""
    data = answer.get("data")
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value:
        raise ApiError(200, -1, f"answer without data.{key}")
    return value


def _form_data(form: Form) -> aiohttp.FormData:
    """Built per request: aiohttp cannot send one FormData twice (the retry after a stale token)."""
    data = aiohttp.FormData()
    for name, value in form.items():
        if isinstance(value, tuple):
            data.add_field(name, value[1], filename=value[0], content_type="application/octet-stream")
        else:
            data.add_field(name, value)
    return data


async def _decode(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    try:
        data = await resp.json(content_type=None)
    except ValueError as e:
        raise ApiError(resp.status, -1, f"non-JSON answer ({resp.reason})") from e
    if not isinstance(data, dict):
        raise ApiError(resp.status, -1, "unexpected answer")
    code = int(data.get("code", 0) or 0)
    if resp.status >= 400 or code != 0:
        reset = resp.headers.get("x-ogw-ratelimit-reset")
        retry_after = float(reset) if reset and reset.isdigit() else None
        raise ApiError(resp.status, code, str(data.get("msg", "")), retry_after)
    return data
