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
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from bot.agent.events import FailureKind
from bot.agent.http1 import Client, Response
from bot.config import ConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM) ignore the key
CONNECT_TIMEOUT = 5.0
MAX_RETRY_AFTER = 60.0  # a server asking for a longer wait is not retried: the user would wait too long
INITIAL_BACKOFF, MAX_BACKOFF = 0.5, 8.0
_KEY_PATTERN = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*]{6,}")


class LLMError(Exception):
    """A failed model call; `kind` is one of the RunFailed kinds, `detail` is for logs only."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def error_kind(status: int | None, error: Mapping[str, Any]) -> FailureKind:
    """The RunFailed kind of an API error: an HTTP status with its `{"error": …}` body, or an in-stream error."""
    code = error.get("code")
    message = str(error.get("message") or "").lower()
    if code == "context_length_exceeded" or (status == 400 and ("context length" in message
                                                                 or "context_length" in message)):
        return FailureKind.CONTEXT
    if status == 429 or code == "rate_limit_exceeded":
        return FailureKind.RATE_LIMIT
    if status in (401, 403):
        return FailureKind.AUTH
    if (status is not None and status >= 500) or error.get("type") == "server_error":
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


class Provider:
    """One provider endpoint: `post` gives the 2xx response of a request after the retries, or raises LLMError."""

    def __init__(self, base_url: str | None, api_key: str | None, timeout: float, max_retries: int) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._key = api_key
        headers = {"Authorization": f"Bearer {api_key or PLACEHOLDER_KEY}", "User-Agent": "bothub"}
        # Per phase, as the SDK: a connect deadline, and `timeout` as the longest silence while reading.
        # No connection cap: the lanes bound concurrent runs.
        try:
            self._client = Client(self.base_url, headers, min(CONNECT_TIMEOUT, timeout), timeout)
        except ValueError as e:  # a base URL that is not http(s), a key with a line break in it
            raise ConfigError(f"the model provider's settings (OPENAI_BASE_URL, OPENAI_API_KEY): {e}") from None
        self.max_retries = max_retries

    async def close(self) -> None:
        self._client.close()

    def describe(self, e: BaseException | str) -> str:
        """Error text for logs, with anything key-like removed (401 bodies echo part of the key)."""
        detail = e if isinstance(e, str) else f"{type(e).__name__}: {e}"
        if self._key:
            detail = detail.replace(self._key, "***")
        return _KEY_PATTERN.sub(r"\1-***", detail)

    @asynccontextmanager
    async def post(self, path: str, body: bytes, content_type: str = "application/json"
                   ) -> AsyncIterator[Response]:
        """The successful response to a POST (encoded JSON unless said otherwise); transport failures while reading
        it, too, become LLMError. Nothing is retried once the response is handed out: the user may have seen it."""
        response = await self._request("POST", path, body, content_type)
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

    async def _request(self, method: str, path: str, body: bytes = b"", content_type: str | None = None
                       ) -> Response:
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = await self._client.request(method, path, body, content_type)
            except (TimeoutError, OSError) as e:
                if last:
                    raise LLMError(transport_kind(e), self.describe(e)) from e
                await asyncio.sleep(backoff(attempt))
                continue
            if response.status < 300:
                return response
            error = await _error_body(response)
            delay = None if last else retry_delay(attempt, response.status, response.headers)
            if delay is None:
                message = self.describe(f"HTTP {response.status}: {error.get('message') or response.reason}")
                raise LLMError(error_kind(response.status, error), message)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")


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
