"""DingTalk's OpenAPI over one long-lived aiohttp session, with our own access-token lifecycle.

The SDK fetches tokens and posts with blocking `requests` (it would freeze the hub's loop), so the adapter
makes its calls itself; the SDK is kept for what it is good at, the Stream frames (stream.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from bot.httpkit.fence import fenced_trace
from bot.httpkit.tokens import TokenKeeper

API_BASE = "https://api.dingtalk.com"
OAPI_BASE = "https://oapi.dingtalk.com"
TOKEN_PATH = "/v1.0/oauth2/accessToken"
TOKEN_HEADER = "x-acs-dingtalk-access-token"
STALE_TOKEN_CODES = frozenset({"InvalidAuthentication", "invalidAuthentication", "40014", "42001"})
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=300, sock_read=60)


class ApiError(Exception):
    """The platform refused: an HTTP error with `code`/`message` (OpenAPI) or a non-zero errcode (oapi, webhook)."""

    def __init__(self, status: int, code: str, msg: str, retry_after: float | None = None) -> None:
        super().__init__(f"dingtalk HTTP {status} code {code}: {msg}")
        self.status, self.code, self.msg, self.retry_after = status, code, msg, retry_after


class DingTalkHttp:
    """Authenticated JSON calls on one session; the token is kept by the kit's TokenKeeper."""

    def __init__(self, api_base: str, oapi_base: str, client_id: str, client_secret: str,
                 timeout: float = 15.0, proxy: str | None = None) -> None:
        self.api_base, self.oapi_base = api_base.rstrip("/"), oapi_base.rstrip("/")
        self.client_id = client_id
        self._secret = client_secret
        self._proxy = proxy
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self.tokens = TokenKeeper(self._fetch_token, "dingtalk", (ApiError, aiohttp.ClientError, TimeoutError))

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=self._timeout, proxy=self._proxy,
                                              trace_configs=[fenced_trace()])  # the fence's last check
        await self.tokens.start()

    async def close(self) -> None:
        await self.tokens.close()
        if self._session is not None:
            await self._session.close()
        self._session = None

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "DingTalkHttp.start() not called"
        return self._session

    async def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        """An OpenAPI call (api_base); one retry on a stale token."""
        token = await self.tokens.token()
        try:
            return await self._api(method, path, token, body)
        except ApiError as e:
            if e.code not in STALE_TOKEN_CODES:
                raise
            return await self._api(method, path, await self.tokens.refresh_after(token), body)

    async def upload(self, kind: str, name: str, data: bytes, mime: str) -> str:
        """media/upload on the older API (the token in the query); returns the media id."""
        form = aiohttp.FormData()
        form.add_field("type", kind)
        form.add_field("media", data, filename=name, content_type=mime)
        params = {"access_token": await self.tokens.token()}
        async with self.session.post(f"{self.oapi_base}/media/upload", params=params, data=form) as resp:
            answer = await _decode_errcode(resp)
        media_id = answer.get("media_id")
        if not isinstance(media_id, str) or not media_id:
            raise ApiError(200, "-1", "upload answer without media_id")
        return media_id

    async def post_webhook(self, url: str, body: dict[str, Any]) -> None:
        """A message through a session webhook (the URL is its credential; no token)."""
        async with self.session.post(url, json=body) as resp:
            await _decode_errcode(resp)

    @contextlib.asynccontextmanager
    async def fetch(self, url: str) -> AsyncIterator[aiohttp.StreamReader]:
        """A file at a short-lived download URL, as a stream."""
        async with self.session.get(url, timeout=DOWNLOAD_TIMEOUT, allow_redirects=False) as resp:
            if resp.status != 200:
                raise ApiError(resp.status, str(resp.status), "the file download was refused")
            yield resp.content

    async def _api(self, method: str, path: str, token: str, body: Any) -> dict[str, Any]:
        headers = {TOKEN_HEADER: token}
        async with self.session.request(method, self.api_base + path, json=body, headers=headers) as resp:
            return await _decode(resp)

    async def _fetch_token(self) -> tuple[str, float]:
        payload = {"appKey": self.client_id, "appSecret": self._secret}
        async with self.session.post(self.api_base + TOKEN_PATH, json=payload) as resp:
            data = await _decode(resp)
        token = data.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ApiError(resp.status, "-1", "token answer without accessToken")
        return token, float(data.get("expireIn", 7200))


def _retry_after(resp: aiohttp.ClientResponse) -> float | None:
    value = resp.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


async def _json(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    try:
        data = await resp.json(content_type=None)
    except ValueError as e:
        raise ApiError(resp.status, "-1", f"non-JSON answer ({resp.reason})") from e
    if not isinstance(data, dict):
        raise ApiError(resp.status, "-1", "unexpected answer")
    return data


async def _decode(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    """The OpenAPI: success is a 2xx; a refusal is 4xx/5xx with {"code", "message"}."""
    data = await _json(resp)
    if resp.status >= 400:
        raise ApiError(resp.status, str(data.get("code", resp.status)), str(data.get("message", "")),
                       _retry_after(resp))
    return data


async def _decode_errcode(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    """The older API and webhooks: HTTP 200 with {"errcode", "errmsg"}, 0 on success."""
    data = await _json(resp)
    code = int(data.get("errcode", 0) or 0)
    if resp.status >= 400 or code != 0:
        raise ApiError(resp.status, str(code), str(data.get("errmsg", "")), _retry_after(resp))
    return data
