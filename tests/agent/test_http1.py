"""The provider's HTTP/1.1 client against a raw socket server that answers byte for byte what each test scripts."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.agent.http1 import Client, ProtocolError, multipart
from bot.agent.provider import Provider
from bot.config import ConfigError


class RawServer:
    """Reads each request (head and Content-Length body), records it, and writes the next scripted answer."""

    def __init__(self, answers: list[bytes], close_after: bool = False) -> None:
        self.answers = answers
        self.close_after = close_after  # close the connection after each answer, without saying so
        self.requests: list[bytes] = []
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                for i in range(len(answer)):  # a byte at a time: every parser boundary is crossed
                    writer.write(answer[i:i + 1])
                    await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(server: RawServer, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()


def client(port: int, read_timeout: float = 5.0, scheme: str = "http") -> Client:
    return Client(f"{scheme}://127.0.0.1:{port}/v1", {"Authorization": "Bearer k"}, 5.0, read_timeout)


STREAM_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
CHUNKED = STREAM_HEAD + b"8;ext=1\r\ndata: a\n\r\n9\r\ndata: bc\n\r\n0\r\nX-Trailer: t\r\n\r\n"  # extension, trailer
SSE = STREAM_HEAD + b"8\r\ndata: a\n\r\n9\r\ndata: bc\n\r\n0\r\n\r\n"


async def test_chunked_answer_read_byte_by_byte_and_the_connection_is_kept() -> None:
    server = RawServer([CHUNKED, CHUNKED])
    async with serving(server) as port:
        http = client(port)
        for _ in range(2):
            response = await http.request("POST", "/chat/completions", b'{"x": 1}', "application/json")
            assert response.status == 200 and response.headers["content-type"] == "text/event-stream"
            assert await response.read() == b"data: a\ndata: bc\n"
            response.release()
        http.close()
    assert server.connections == 1
    first = server.requests[0]
    assert first.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in first and b"\r\nAuthorization: Bearer k\r\n" in first
    assert b"\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n" in first and first.endswith(b'{"x": 1}')


async def test_a_stream_left_after_its_last_event_keeps_the_connection_when_only_the_end_is_left() -> None:
    server = RawServer([SSE, SSE])
    async with serving(server) as port:
        http = client(port)
        response = await http.request("POST", "/chat/completions", b"{}")
        seen = b""
        async for piece in response.iter_any():
            seen += piece
            if seen.endswith(b"data: bc\n"):
                break  # what the SSE reader does at `data: [DONE]`
        await asyncio.sleep(0.05)  # the chunked end ("\r\n0\r\n\r\n") has arrived meanwhile
        response.release()
        again = await http.request("POST", "/chat/completions", b"{}")
        assert await again.read() == b"data: a\ndata: bc\n"
        again.release()
        http.close()
    assert server.connections == 1


async def test_content_length_and_connection_close() -> None:
    answer = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 5\r\nConnection: close\r\n\r\nslow!"
    server = RawServer([answer, answer])
    async with serving(server) as port:
        http = client(port)
        for _ in range(2):
            response = await http.request("GET", "/models")
            assert (response.status, response.reason) == (429, "Too Many Requests")
            assert response.headers["retry-after"] == "2"
            assert await response.text() == "slow!"
            response.release()
        http.close()
    assert server.connections == 2


async def test_a_body_that_ends_with_the_connection() -> None:
    server = RawServer([b"HTTP/1.1 200 OK\r\n\r\nall of it"], close_after=True)
    async with serving(server) as port:
        response = await client(port).request("GET", "/models")
        assert await response.read() == b"all of it"
        response.release()


async def test_a_kept_connection_the_server_dropped_is_replaced_without_an_error() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server = RawServer([answer, answer], close_after=True)  # closes each connection once it has answered
    async with serving(server) as port:
        http = client(port)
        for _ in range(2):
            response = await http.request("GET", "/models")
            assert await response.read() == b"ok"
            response.release()
            await asyncio.sleep(0.05)
        http.close()
    assert server.connections == 2 and len(server.requests) == 2


async def test_silence_longer_than_the_read_timeout() -> None:
    server = RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nonly", b""])  # then it waits
    async with serving(server) as port:
        response = await client(port, read_timeout=0.2).request("GET", "/models")
        with pytest.raises(TimeoutError):
            await response.read()
        response.release()


@pytest.mark.parametrize("answer", [
    b"HTTP/2 200\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n0123456789",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n",  # longer than said
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",  # never asked for
    b"HTTP/1.1 200 OK\r\n X-Folded: obsolete line folding\r\n\r\n",
    b"HTTP/1.1 2x0 OK\r\n\r\n",
])
async def test_broken_answers_are_protocol_errors(answer: bytes) -> None:
    server = RawServer([answer], close_after=True)
    async with serving(server) as port:
        with pytest.raises(ProtocolError):
            response = await client(port).request("GET", "/models")
            await response.read()


async def test_nobody_listening_is_a_connection_error() -> None:
    async with serving(RawServer([])) as port:
        pass
    with pytest.raises(ConnectionError):
        await client(port).request("GET", "/models")


def _self_signed(tmp_path: Path) -> ssl.SSLContext:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    return context


async def test_https_checks_the_certificate(tmp_path: Path) -> None:
    server = RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
    async with serving(server, tls=_self_signed(tmp_path)) as port:
        with pytest.raises(ssl.SSLCertVerificationError):
            await client(port, scheme="https").request("GET", "/models")
    assert server.requests == []  # nothing was sent to a server that could not prove who it is


def test_settings_that_cannot_make_a_request_are_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="line break"):
        Provider("http://127.0.0.1:1/v1", "sk-abc\n", 5.0, 0)
    with pytest.raises(ConfigError, match="latin-1"):
        Provider("http://127.0.0.1:1/v1", "sk-ключ", 5.0, 0)
    with pytest.raises(ConfigError, match="not an http"):
        Provider("ftp://example.invalid/v1", "sk-abc", 5.0, 0)


def test_multipart_names_the_file_safely() -> None:
    body, content_type = multipart({"model": "whisper-1"}, "file", 'a"b\r\n.ogg', b"\x00audio")
    boundary = content_type.split("boundary=")[1].encode()
    assert body.startswith(b"--" + boundary + b"\r\n") and body.endswith(b"--" + boundary + b"--\r\n")
    assert b'name="model"\r\n\r\nwhisper-1\r\n' in body
    assert b'filename="a\\"b  .ogg"' in body and b"\r\n\r\n\x00audio\r\n" in body


async def test_no_content_has_no_body_and_repeated_headers_are_joined() -> None:
    server = RawServer([b"HTTP/1.1 204 No Content\r\nVary: a\r\nvary: b\r\n\r\n",
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
    async with serving(server) as port:
        http = client(port)
        empty = await http.request("DELETE", "/files/1")
        assert (empty.status, empty.headers["vary"], await empty.read()) == (204, "a, b", b"")
        empty.release()
        empty.release()  # once is what counts
        again = await http.request("GET", "/models")
        assert await again.read() == b"ok"
        again.release()
        http.close()
    assert server.connections == 1  # the connection was kept across the bodiless answer
