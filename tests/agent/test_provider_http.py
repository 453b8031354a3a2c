"""The provider's requests over real sockets (the raw server of test_http1): a connection that breaks before any
answer is retried after a backoff, a refusal whose body is not JSON keeps its status line, an answer that is not
JSON is an error of its own, a pool of keys moves past resting keys until every one rests, and a request's body is
let go once its answer has begun."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bot.agent.events import FailureKind
from bot.agent.provider import LLMError, Provider
from tests.agent.test_http1 import RawServer, serving

OK = b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"data": 1}'
SLOW_DOWN = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After-Ms: soon\r\nRetry-After: 30\r\nContent-Length: 2\r\n\r\n{}"


class HangsUpFirst(RawServer):
    """Its first connection reads the request and closes without a word; later ones answer as scripted."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.connections:
            return await super().handle(reader, writer)
        self.connections += 1
        self.requests.append(await reader.readuntil(b"\r\n\r\n"))
        writer.close()


async def test_a_connection_broken_before_any_answer_is_retried() -> None:
    server = HangsUpFirst([OK])
    async with serving(server) as port:
        provider = Provider(f"http://127.0.0.1:{port}/v1", "sk-test-0000", 5.0, max_retries=1)
        assert await provider.get_json("/models") == {"data": 1}
        await provider.close()
    assert (server.connections, len(server.requests)) == (2, 2)


@pytest.mark.parametrize(("answer", "kind", "said"), [
    (b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!", FailureKind.SERVER,
     "HTTP 500: Internal Server Error"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nnot json", FailureKind.OTHER, "JSONDecodeError: "),
], ids=["refusal-not-json", "answer-not-json"])
async def test_bodies_that_are_not_json(answer: bytes, kind: FailureKind, said: str) -> None:
    async with serving(RawServer([answer])) as port:
        provider = Provider(f"http://127.0.0.1:{port}/v1", "sk-test-0000", 5.0, max_retries=0)
        with pytest.raises(LLMError) as failed:
            await provider.get_json("/models")
        await provider.close()
    assert failed.value.kind == kind and failed.value.detail.startswith(said)


async def test_a_pool_moves_past_resting_keys_until_every_one_rests() -> None:
    server = RawServer([SLOW_DOWN, SLOW_DOWN, OK, SLOW_DOWN])
    keys = ["sk-key-aaaaaaaa", "sk-key-bbbbbbbb", "sk-key-cccccccc"]
    async with serving(server) as port:
        provider = Provider(f"http://127.0.0.1:{port}/v1", keys, 5.0, max_retries=0)
        assert await provider.get_json("/models") == {"data": 1}  # a and b rest; c answers
        with pytest.raises(LLMError) as failed:
            await provider.get_json("/models")  # c rests too, and a and b still do: nothing left to try
        await provider.close()
    assert failed.value.kind == FailureKind.RATE_LIMIT
    used = [next(k for k in keys if k.encode() in request) for request in server.requests]
    assert used == [keys[0], keys[1], keys[2], keys[2]]


async def test_a_post_lets_its_body_go_once_the_answer_has_begun() -> None:
    """Guards the footprint of many runs in flight: an answer streams for seconds, and a thousand bodies held until
    it ends were ≈ 24 MB (bench/footprint.py). Nothing but this test refers to the body while it reads the answer."""
    body = b'{"q": "%s"}' % (b"x" * 100_000)
    before = sys.getrefcount(body)
    server = RawServer([OK])
    async with serving(server) as port:
        provider = Provider(f"http://127.0.0.1:{port}/v1", "sk-test-0000", 5.0, max_retries=0)
        async with provider.post("/chat/completions", body) as response:
            held = sys.getrefcount(body)
            assert await response.read() == b'{"data": 1}'
        await provider.close()
    assert held == before
    assert server.requests[0].endswith(body) and b"Content-Length: %d\r\n" % len(body) in server.requests[0]
