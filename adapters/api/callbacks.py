"""Posting a finished answer to the caller's callback URL: behind web_fetch's SSRF guard, with a timeout per
attempt and retries with backoff on network errors, 408, 429 and 5xx. Redirects are not followed.

Each post is signed, so the receiver can tell it from a forgery: `X-Bothub-Signature: sha256=<hex>`, the
HMAC-SHA256 of the body keyed with the hex SHA-256 of the caller's token (what the store keeps, so the hub
signs without ever storing the token; the receiver, who holds the token, computes the same key)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from typing import Any

import aiohttp
from yarl import URL

from bot.httpkit.netguard import Lookup, PinnedResolver, Refused, allow_list, guarded_session, system_lookup, vet

log = logging.getLogger("bothub.api")
USER_AGENT = "bothub-api-callback/0.1"
RETRY_STATUSES = frozenset({408, 429})
SIGNATURE = "X-Bothub-Signature"


class Callbacks:
    def __init__(self, allow_hosts: list[str], timeout: float, attempts: int, backoff: float,
                 lookup: Lookup = system_lookup) -> None:
        self._allow = allow_list(allow_hosts)
        self._timeout = timeout
        self._attempts = attempts
        self._backoff = backoff
        self._lookup = lookup

    async def check(self, url: str) -> None:
        """Refuse a URL the guard would refuse now, so the caller hears it at once (delivery checks again)."""
        await vet(_parse(url), self._allow, PinnedResolver(), self._lookup)

    async def deliver(self, url: str, body: dict[str, Any], signing_key: str) -> bool:
        """True once the receiver answered 2xx; False after the last attempt or a refusal."""
        host = URL(url).host
        payload = json.dumps(body, ensure_ascii=False).encode()
        signature = hmac.new(signing_key.encode(), payload, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json", SIGNATURE: f"sha256={signature}"}
        for attempt in range(self._attempts):
            if attempt:
                await asyncio.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                status = await self._post(url, payload, headers)
            except Refused as e:
                log.warning("api callback to %s refused: %s", host, e)
                return False
            except (aiohttp.ClientError, OSError, TimeoutError) as e:
                log.info("api callback to %s, attempt %d: %s", host, attempt + 1, type(e).__name__)
                continue
            if 200 <= status < 300:
                return True
            log.info("api callback to %s, attempt %d: HTTP %d", host, attempt + 1, status)
            if status < 500 and status not in RETRY_STATUSES:
                return False
        log.warning("api callback to %s failed after %d attempts", host, self._attempts)
        return False

    async def _post(self, url: str, payload: bytes, headers: dict[str, str]) -> int:
        session, resolver = guarded_session(aiohttp.ClientTimeout(total=self._timeout), USER_AGENT)
        async with asyncio.timeout(self._timeout), session:  # the name lookup included
            target = _parse(url)
            await vet(target, self._allow, resolver, self._lookup)
            async with session.post(target, data=payload, headers=headers, allow_redirects=False) as resp:
                return resp.status


def _parse(url: str) -> URL:
    try:
        return URL(url)
    except (ValueError, TypeError):
        raise Refused("that is not a valid URL") from None
