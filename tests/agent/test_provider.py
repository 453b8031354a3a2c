"""The provider's retry rules (the ones the OpenAI SDK applies) and failure kinds, as pure functions."""

from __future__ import annotations

import email.utils
import time

import pytest

from bot.agent.provider import MAX_BACKOFF, backoff, error_kind, retry_delay


@pytest.mark.parametrize(("status", "headers", "expected"), [
    (429, {"retry-after": "2"}, 2.0),
    (429, {"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # milliseconds win
    (429, {"retry-after-ms": "soon", "retry-after": "2"}, 2.0),  # unless they are not a number
    (503, {"retry-after": "1.5"}, 1.5),
    (408, {"retry-after": "1"}, 1.0),
    (409, {"retry-after": "1"}, 1.0),
    (429, {"retry-after": "61"}, None),  # longer than a minute: give up, tell the user
    (400, {"retry-after": "1"}, None),  # a bad request stays bad
    (401, {}, None),
    (400, {"x-should-retry": "true", "retry-after": "3"}, 3.0),  # the server's word wins
    (503, {"x-should-retry": "false"}, None),
])
def test_retry_delay_follows_status_and_headers(status: int, headers: dict[str, str], expected: float | None) -> None:
    assert retry_delay(0, status, headers) == expected


def test_retry_after_as_a_date_and_backoff_without_a_header() -> None:
    in_three = email.utils.formatdate(time.time() + 3, usegmt=True)
    delay = retry_delay(0, 429, {"retry-after": in_three})
    assert delay is not None and 1.5 < delay <= 3.0
    assert 0.375 <= (retry_delay(0, 500, {}) or 0) <= 0.5  # 0.5 s less up to 25 % jitter
    assert 1.5 <= backoff(2) <= 2.0 and backoff(10) <= MAX_BACKOFF


@pytest.mark.parametrize(("status", "error", "kind"), [
    (400, {"code": "context_length_exceeded"}, "context"),
    (400, {"message": "This model's maximum context length is 8192 tokens"}, "context"),
    (429, {"code": "insufficient_quota"}, "rate_limit"),
    (None, {"code": "rate_limit_exceeded"}, "rate_limit"),  # an in-stream error
    (401, {"code": "invalid_api_key"}, "auth"),
    (403, {}, "auth"),
    (502, {}, "server"),
    (None, {"type": "server_error"}, "server"),
    (404, {"code": "model_not_found"}, "other"),
])
def test_error_kinds(status: int | None, error: dict[str, str], kind: str) -> None:
    assert error_kind(status, error) == kind
