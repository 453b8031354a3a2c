"""The `api:` config section: per-token rate limit, body cap, how long a reply is waited for, callbacks."""

from __future__ import annotations

from pydantic import Field

from bot.adapter import PlatformConfig


class ApiConfig(PlatformConfig):
    requests_per_minute: float = Field(60.0, gt=0)  # per token, after the burst
    burst: int = Field(10, ge=1)  # requests a token may make at once
    max_body_bytes: int = Field(64_000, ge=1024)
    reply_timeout: float = Field(300.0, gt=0)  # seconds a request waits for the complete answer
    callback_timeout: float = Field(10.0, gt=0)  # seconds per delivery attempt
    callback_attempts: int = Field(4, ge=1)
    callback_backoff: float = Field(1.0, ge=0)  # seconds before the second attempt, doubled after each
    callback_allow_hosts: list[str] = Field(default_factory=list)  # exempt from the SSRF rules (tests, intranet)
