"""The model provider's OpenAI-compatible HTTP API: auth, timeouts, retries, failure kinds.

Requests go out directly (bot/agent/http1.py) rather than through the `openai` SDK: under a thousand concurrent
answers its request path (option transforms, httpx models, the transport adapter) was the largest cost on the
event loop, and aiohttp's client the next. What the SDK decided lives here, in one place: which failures are
retried and how long to wait (Retry-After, else exponential backoff with jitter), per-phase timeouts, and one
`kind` per failure with a log text that never shows the key.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from bot.agent.events import FailureKind
from bot.agent.http1 import Client, Response
from bot.config import ConfigError, proxy_for

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM) ignore the key
CONNECT_TIMEOUT = 5.0
KEY_REST = 60.0  # seconds a rate-limited key of a pool rests when the server gives no wait
MAX_RETRY_AFTER = 60.0  # a server asking for a longer wait is not retried: the user would wait too long
INITIAL_BACKOFF, MAX_BACKOFF = 0.5, 8.0
# OpenAI-compatible servers; Anthropic; Gemini
_TOO_LONG = ("context length", "context_length", "prompt is too long", "exceeds the maximum number of tokens")
# in-stream errors (OpenAI; Anthropic; Gemini)
_SERVER_TYPES = frozenset({"server_error", "api_error", "overloaded_error", "UNAVAILABLE", "INTERNAL"})
_KEY_PATTERN = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*]{6,}")


class LLMError(Exception):
    """A failed model call; `kind` is one of the RunFailed kinds, `detail` is for logs only."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.model: str | None = None  # the chain link that failed, set by the chain


def error_kind(status: int | None, error: Mapping[str, Any]) -> FailureKind:
    """The RunFailed kind of an API error: an HTTP status with its `{"error": …}` body, or an in-stream error."""
    code, kind = error.get("code"), error.get("type") or error.get("status")
    message = str(error.get("message") or "").lower()
    if code == "context_length_exceeded" or (status == 400 and any(s in message for s in _TOO_LONG)):
        return FailureKind.CONTEXT
    if status == 429 or code == "rate_limit_exceeded" or kind == "rate_limit_error":
        return FailureKind.RATE_LIMIT
    if status in (401, 403) or "api key not valid" in message:  # Gemini refuses a bad key with a 400
        return FailureKind.AUTH
    if (status is not None and status >= 500) or kind in _SERVER_TYPES:
        return FailureKind.SERVER
    return FailureKind.OTHER


def transport_kind(e: BaseException) -> FailureKind:
    """A failure below HTTP: no answer in time, or no connection at all."""
    return FailureKind.TIMEOUT if isinstance(e, TimeoutError) else FailureKind.CONNECTION


def retry_delay(attempt: int, status: int, headers: Mapping[str, str]) -> float | None:
    """Seconds to wait before retrying a refused request (None: don't), as the OpenAI SDK decides.

    408, 409, 429 and 5xx are retried unless `x-should-retry` says otherwise; a server-given wait
    (`retry-after-ms`, `retry-after` in seconds or as a date) is honoured up to MAX_RETRY_AFTER.
    """
    asked = _retry_after(headers)
    if asked is not None and asked > MAX_RETRY_AFTER:
        return None
    should = headers.get("x-should-retry")
    if should == "false" or (should != "true" and status not in (408, 409, 429) and status < 500):
        return None
    return asked if asked is not None and asked > 0 else backoff(attempt)


def backoff(attempt: int) -> float:
    return min(INITIAL_BACKOFF * 2.0 ** min(attempt, 30), MAX_BACKOFF) * (1 - 0.25 * random.random())


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            if name == "retry-after":
                with contextlib.suppress(TypeError, ValueError):  # an HTTP date, or nothing usable
                    return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    return None


def bearer(key: str | None) -> dict[str, str]:
    """OpenAI-style auth; local OpenAI-compatible servers get a placeholder they ignore."""
    return {"Authorization": f"Bearer {key or PLACEHOLDER_KEY}"}


class _Key:
    """One key of a provider's pool with its own connections; a 429 rests it until the server's wait is over."""

    def __init__(self, client: Client, secret: str | None) -> None:
        self.client, self.secret = client, secret
        self.resting_until = 0.0


class Provider:
    """One provider endpoint: `post` gives the 2xx response of a request after the retries, or raises LLMError.

    Several keys make a credential pool: requests use one key until it is rate-limited (429), then the next
    one that is not resting, at once and without counting as a retry."""

    def __init__(self, base_url: str | None, api_key: str | Sequence[str] | None, timeout: float, max_retries: int,
                 auth: Callable[[str | None], dict[str, str]] = bearer, default_url: str = DEFAULT_BASE_URL, *,
                 env: Mapping[str, str] | None = None) -> None:
        """`env`: where HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY are read (none: a direct connection)."""
        self.base_url = (base_url or default_url).rstrip("/")
        self.proxy = proxy_for(self.base_url, env or {})
        secrets: list[str | None] = [api_key] if api_key is None or isinstance(api_key, str) else [*api_key]
        secrets = secrets or [None]
        self._secrets = [k for k in secrets if k]
        # Per phase, as the SDK: a connect deadline, and `timeout` as the longest silence while reading.
        # No connection cap: the lanes bound concurrent runs.
        try:
            self._keys = [_Key(Client(self.base_url, {**auth(key), "User-Agent": "bothub"},
                                      min(CONNECT_TIMEOUT, timeout), timeout, self.proxy), key) for key in secrets]
        except ValueError as e:  # a base URL that is not http(s), a key with a line break, a socks proxy
            raise ConfigError(f"the model provider's settings ({self.base_url}, its API key, the proxy): {e}"
                              ) from None
        self._current = 0
        self.max_retries = max_retries

    async def close(self) -> None:
        for key in self._keys:
            key.client.close()

    def describe(self, e: BaseException | str) -> str:
        """Error text for logs, with anything key-like removed (401 bodies echo part of the key)."""
        detail = e if isinstance(e, str) else f"{type(e).__name__}: {e}"
        for secret in self._secrets:
            detail = detail.replace(secret, "***")
        return _KEY_PATTERN.sub(r"\1-***", detail)

    @asynccontextmanager
    async def post(self, path: str, body: bytes, content_type: str = "application/json", retries: int | None = None
                   ) -> AsyncIterator[Response]:
        """The successful response to a POST (encoded JSON unless said otherwise); transport failures while reading
        it, too, become LLMError. Nothing is retried once the response is handed out: the user may have seen it.
        `retries` overrides max_retries (a failover link gives up sooner: the next link is waiting)."""
        response = await self._request("POST", path, body, content_type, retries)
        del body  # answered: a streamed answer may take minutes, and a thousand requests' bodies are ≈ 24 MB
        try:
            yield response
        except (TimeoutError, OSError) as e:
            raise LLMError(transport_kind(e), self.describe(e)) from e
        finally:
            response.release()

    async def get_json(self, path: str) -> Any:
        response = await self._request("GET", path)
        try:
            return json.loads(await response.read())
        except (TimeoutError, OSError, ValueError) as e:
            kind = FailureKind.OTHER if isinstance(e, ValueError) else transport_kind(e)
            raise LLMError(kind, self.describe(e)) from e
        finally:
            response.release()

    async def _request(self, method: str, path: str, body: bytes = b"", content_type: str | None = None,
                       retries: int | None = None) -> Response:
        retries = self.max_retries if retries is None else retries
        attempt = 0
        while True:
            key = self._key()
            try:
                response = await key.client.request(method, path, body, content_type)
            except (TimeoutError, OSError) as e:
                if attempt >= retries:
                    raise LLMError(transport_kind(e), self.describe(e)) from e
                await asyncio.sleep(backoff(attempt))
                attempt += 1
                continue
            if response.status < 300:
                return response
            error = await _error_body(response)
            if response.status == 429 and self._rest(key, response.headers):
                continue  # another key of the pool is free: no wait, no retry used
            delay = None if attempt >= retries else retry_delay(attempt, response.status, response.headers)
            if delay is None:
                message = self.describe(f"HTTP {response.status}: {error.get('message') or response.reason}")
                raise LLMError(error_kind(response.status, error), message)
            await asyncio.sleep(delay)
            attempt += 1

    def _key(self) -> _Key:
        return self._keys[self._current]

    def _rest(self, key: _Key, headers: Mapping[str, str]) -> bool:
        """Rest a rate-limited key for the server's wait (else KEY_REST) and move to the next free one, if any."""
        now = time.monotonic()
        key.resting_until = now + (_retry_after(headers) or KEY_REST)
        for step in range(1, len(self._keys)):
            index = (self._current + step) % len(self._keys)
            if self._keys[index].resting_until <= now:
                self._current = index
                return True
        return False


async def _error_body(response: Response) -> dict[str, Any]:
    """The `error` object of a refusal (`{}` when the body is not the API's JSON); the connection is released."""
    try:
        parsed = json.loads(await response.read())
    except (TimeoutError, OSError, ValueError):
        return {}
    finally:
        response.release()
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return error if isinstance(error, dict) else {}
